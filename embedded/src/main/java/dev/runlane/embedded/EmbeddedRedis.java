package dev.runlane.embedded;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;
import redis.embedded.core.ExecutableProvider;

/**
 * A Redis for tests and the local stack: either one we were given (not owned: never stopped,
 * flushed or reconfigured) or a {@code redis-server} process we started (owned) on a free loopback
 * port, without persistence, so a restart loses every key.
 */
public final class EmbeddedRedis implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedRedis.class);

  private static final String LOOPBACK = "127.0.0.1";
  private static final int DEFAULT_PORT = 6379;
  private static final Duration LOCAL_PROBE_TIMEOUT = Duration.ofMillis(300);
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);
  private static final int START_ATTEMPTS = 3;
  private static final Duration PING_RETRY_PAUSE = Duration.ofMillis(20);

  private static final Object LOCK = new Object();
  private static EmbeddedRedis shared; // guarded by LOCK
  private static File bundledBinary; // guarded by LOCK

  /** Where the server comes from; for logs and diagnostics. */
  public enum Source {
    /** The {@code REDIS_URL} environment variable (not owned). */
    REDIS_URL,
    /** A Redis already answering on {@code localhost:6379} (not owned). */
    LOCALHOST,
    /** The {@code redis-server} found on {@code PATH} (owned). */
    PATH_BINARY,
    /**
     * The {@code redis-server} shipped in {@code com.github.codemonstur:embedded-redis} (owned).
     */
    BUNDLED_BINARY
  }

  /** The pid of a server {@link #freeze()} stopped, 0 when it runs. */
  private long frozenPid;

  private final URI uri;
  private final String host;
  private final int port;
  private final Source source;
  private final boolean sharedInstance;
  private final RedisServer server; // null when not owned
  private final int tlsPort; // 0 without TLS

  private EmbeddedRedis(
      URI uri, String host, int port, Source source, boolean sharedInstance, RedisServer server) {
    this(uri, host, port, source, sharedInstance, server, 0);
  }

  private EmbeddedRedis(
      URI uri,
      String host,
      int port,
      Source source,
      boolean sharedInstance,
      RedisServer server,
      int tlsPort) {
    this.uri = uri;
    this.host = host;
    this.port = port;
    this.source = source;
    this.sharedInstance = sharedInstance;
    this.server = server;
    this.tlsPort = tlsPort;
  }

  /**
   * The Redis every test in this JVM shares (design.md §10): {@code REDIS_URL} if set, else {@code
   * localhost:6379} if it answers PING within 300 ms, else the bundled {@code redis-server} started
   * on a free port (stopped when the JVM exits). The same instance on every call; namespace keys
   * per test and never stop, restart or flush it.
   */
  public static EmbeddedRedis shared() {
    synchronized (LOCK) {
      if (shared == null) {
        shared = resolveShared(System.getenv("REDIS_URL"));
        LOG.info("shared Redis: {}", shared);
      }
      return shared;
    }
  }

  /**
   * A new server that the caller owns (and must close), on a free loopback port: the {@code
   * redis-server} on {@code PATH} if there is one, else the bundled binary. No persistence.
   */
  public static EmbeddedRedis startOwned() {
    return startOwned(List.of());
  }

  /**
   * Like {@link #startOwned()}, with extra {@code redis.conf} lines, e.g. {@code requirepass
   * secret} for a server that needs a password.
   */
  public static EmbeddedRedis startOwned(List<String> settings) {
    return startOwned(settings, null);
  }

  /**
   * Like {@link #startOwned(List)}, also listening for TLS on {@link #tlsPort()} with {@code tls}'s
   * certificate (clients not asked for one), and speaking TLS to the other nodes of a cluster or a
   * replication group ({@code tls-cluster}, {@code tls-replication}): what a cluster or replica
   * announces is then its TLS port. The plain port stays open for the launchers' own commands.
   */
  public static EmbeddedRedis startOwned(List<String> settings, TlsStores tls) {
    File path = findOnPath("redis-server");
    if (path != null) {
      return startProcess(path, Source.PATH_BINARY, false, settings, tls);
    }
    return startProcess(bundledBinary(), Source.BUNDLED_BINARY, false, settings, tls);
  }

  /** The {@code redis.conf} lines of a server that also speaks TLS on {@code tlsPort}. */
  static List<String> tlsSettings(TlsStores tls, int tlsPort) {
    return List.of(
        "tls-port " + tlsPort,
        "tls-cert-file " + tls.certificatePem(),
        "tls-key-file " + tls.privateKeyPem(),
        "tls-ca-cert-file " + tls.certificatePem(),
        "tls-auth-clients no",
        "tls-replication yes",
        "tls-cluster yes");
  }

  /** The {@code redis-server} an owned server runs: the one on {@code PATH}, else the bundled. */
  static File ownedBinary() {
    File path = findOnPath("redis-server");
    return path != null ? path : bundledBinary();
  }

  static EmbeddedRedis resolveShared(String redisUrl) {
    if (redisUrl != null && !redisUrl.isBlank()) {
      URI given = parseRedisUrl(redisUrl);
      return new EmbeddedRedis(
          given, given.getHost(), portOf(given), Source.REDIS_URL, true, /* server= */ null);
    }
    if (answersPing("localhost", DEFAULT_PORT, LOCAL_PROBE_TIMEOUT)) {
      return new EmbeddedRedis(
          URI.create("redis://localhost:" + DEFAULT_PORT),
          "localhost",
          DEFAULT_PORT,
          Source.LOCALHOST,
          true,
          /* server= */ null);
    }
    return startProcess(bundledBinary(), Source.BUNDLED_BINARY, true, List.of(), null);
  }

  /** {@code redis://host:port} (a given {@code REDIS_URL} is returned as given). */
  public URI uri() {
    return uri;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  /** The TLS port of a server started with TLS; 0 otherwise. */
  public int tlsPort() {
    return tlsPort;
  }

  /** How many keys the server holds ({@code DBSIZE}). */
  public long keyCount() {
    return (Long) Resp.call(host, port, "DBSIZE");
  }

  /** Whether this JVM started the server (then it dies with {@link #close()} or the JVM). */
  public boolean owned() {
    return server != null;
  }

  public Source source() {
    return source;
  }

  /** Whether the owned server process is up. Not-owned servers report {@code true}. */
  public synchronized boolean isRunning() {
    return server == null || server.isActive();
  }

  /** Stops an owned server (waits for the process to exit), keeping its port for restart. */
  public synchronized void stop() {
    requireOwnedAndPrivate("stop");
    try {
      server.stop();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop redis-server on port " + port, e);
    }
    if (answersPing(host, port, Duration.ofMillis(200))) {
      throw new IllegalStateException("redis-server on port " + port + " still answers after stop");
    }
  }

  /** Stops (if running) and starts an owned server on the same port; all keys are gone. */
  public synchronized void restart() {
    requireOwnedAndPrivate("restart");
    if (server.isActive()) {
      stop();
    }
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot restart redis-server on port " + port, e);
    }
    awaitPing(host, port);
  }

  /**
   * Kills an owned server with SIGKILL, as a crash would: no shutdown, nothing flushed, its
   * clients' connections reset. Returns once it no longer answers.
   */
  public synchronized void kill() {
    requireOwnedAndPrivate("kill");
    ProcessHandle.of(pid()).ifPresent(ProcessHandle::destroyForcibly);
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (answersPing(host, port, Duration.ofMillis(200))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("redis-server on port " + port + " survived SIGKILL");
      }
      LockSupport.parkNanos(PING_RETRY_PAUSE.toNanos());
    }
  }

  /**
   * Freezes an owned server with SIGSTOP until {@link #thaw()}: it answers nothing, not even PING,
   * and its clients' connections stay open, as a server stalled by its host would. Unlike {@code
   * CLIENT PAUSE}, it lasts until the test says, not for a time the test must beat.
   */
  public synchronized void freeze() {
    requireOwnedAndPrivate("freeze");
    // Asked now: a frozen server answers nothing, INFO included.
    frozenPid = pid();
    signal("STOP", frozenPid);
  }

  /** Lets a frozen server run again (SIGCONT). */
  public synchronized void thaw() {
    requireOwnedAndPrivate("thaw");
    if (frozenPid > 0) {
      signal("CONT", frozenPid);
      frozenPid = 0;
    }
  }

  private static void signal(String name, long pid) {
    try {
      Process p = new ProcessBuilder("sh", "-c", "kill -" + name + " " + pid).start();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + pid + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted sending SIG" + name, e);
    }
  }

  private long pid() {
    String info = Resp.text(host, port, "INFO", "server");
    return info.lines()
        .filter(l -> l.startsWith("process_id:"))
        .mapToLong(l -> Long.parseLong(l.substring("process_id:".length()).trim()))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no process_id in INFO of port " + port));
  }

  /** Stops an owned, non-shared server; no-op for servers we were given or the shared one. */
  @Override
  public synchronized void close() {
    if (server == null || sharedInstance || !server.isActive()) {
      return;
    }
    if (frozenPid > 0) {
      thaw(); // a stopped process would not act on the stop until it runs again
    }
    try {
      server.stop();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop redis-server on port " + port, e);
    }
  }

  @Override
  public String toString() {
    return "EmbeddedRedis["
        + redacted(uri)
        + ", "
        + source
        + (owned() ? ", owned" : ", not owned")
        + "]";
  }

  private void requireOwnedAndPrivate(String action) {
    if (server == null) {
      throw new IllegalStateException(
          "refusing to " + action + " Redis " + redacted(uri) + ": this JVM did not start it");
    }
    if (sharedInstance) {
      throw new IllegalStateException(
          "refusing to " + action + " the shared Redis " + redacted(uri) + "; use startOwned()");
    }
  }

  private static EmbeddedRedis startProcess(
      File binary, Source source, boolean sharedInstance, List<String> settings, TlsStores tls) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      int port = FreePorts.next();
      int tlsPort = tls == null ? 0 : FreePorts.next();
      RedisServer server;
      try {
        var builder =
            RedisServer.newRedisServer()
                .executableProvider(() -> binary)
                .bind(LOOPBACK)
                .port(port)
                .setting("save \"\"")
                .setting("appendonly no")
                .setting("protected-mode yes");
        settings.forEach(builder::setting);
        if (tls != null) {
          tlsSettings(tls, tlsPort).forEach(builder::setting);
        }
        server =
            builder
                // Drain the process output so a chatty server can never block on a full pipe.
                .soutListener(line -> LOG.trace("redis-server:{} {}", port, line))
                .serrListener(line -> LOG.debug("redis-server:{} {}", port, line))
                .build();
        server.start();
      } catch (IOException | RuntimeException e) {
        last = new IllegalStateException("cannot start " + binary + " on port " + port, e);
        LOG.debug("redis-server start attempt {} failed", attempt, e);
        continue;
      }
      try {
        awaitPing(LOOPBACK, port);
      } catch (RuntimeException e) {
        // Started but not answering: stop it before the next attempt takes another port.
        try {
          server.stop();
        } catch (IOException | RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        last = e;
        LOG.debug("redis-server start attempt {} did not answer PING", attempt, e);
        continue;
      }
      LOG.debug("started {} on port {}", binary, port);
      return new EmbeddedRedis(
          URI.create("redis://" + LOOPBACK + ":" + port),
          LOOPBACK,
          port,
          source,
          sharedInstance,
          server,
          tlsPort);
    }
    throw last;
  }

  private static File bundledBinary() {
    synchronized (LOCK) {
      if (bundledBinary == null || !bundledBinary.canExecute()) {
        try {
          bundledBinary = ExecutableProvider.newJarResourceProvider().get();
        } catch (IOException e) {
          throw new UncheckedIOException("cannot extract the bundled redis-server", e);
        }
      }
      return bundledBinary;
    }
  }

  private static File findOnPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      File candidate = new File(dir, name);
      if (candidate.isFile() && candidate.canExecute()) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * Parses {@code REDIS_URL}. Exception messages show the value without its user-info (password);
   * the parser's own exception is not chained, as its message repeats the whole value.
   */
  static URI parseRedisUrl(String value) {
    String trimmed = value.trim();
    URI parsed;
    try {
      parsed = new URI(trimmed.contains("://") ? trimmed : "redis://" + trimmed);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "REDIS_URL "
              + redacted(trimmed)
              + " is not a valid URI: "
              + e.getReason()
              + " at index "
              + e.getIndex());
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("redis") && !scheme.equals("rediss")) {
      throw new IllegalArgumentException(
          "REDIS_URL must be redis:// or rediss://, got " + redacted(trimmed));
    }
    if (parsed.getHost() == null) {
      throw new IllegalArgumentException("REDIS_URL has no host: " + redacted(trimmed));
    }
    return parsed;
  }

  /** {@code uri} for logs and messages: its user-info (user name, password) replaced by ***. */
  static String redacted(URI uri) {
    return redacted(uri.toString());
  }

  /** {@code uri} with the user-info of its authority replaced by ***; works on unparseable text. */
  static String redacted(String uri) {
    int schemeEnd = uri.indexOf("://");
    int authorityStart = schemeEnd < 0 ? 0 : schemeEnd + 3;
    int authorityEnd = authorityStart;
    while (authorityEnd < uri.length() && "/?#".indexOf(uri.charAt(authorityEnd)) < 0) {
      authorityEnd++;
    }
    int at = uri.lastIndexOf('@', authorityEnd - 1);
    if (at < authorityStart) {
      return uri;
    }
    return uri.substring(0, authorityStart) + "***@" + uri.substring(at + 1);
  }

  private static int portOf(URI uri) {
    return uri.getPort() > 0 ? uri.getPort() : DEFAULT_PORT;
  }

  private static void awaitPing(String host, int port) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      // A server that needs a password answers -NOAUTH: it is up all the same.
      String reply = pingReply(host, port, Duration.ofMillis(500));
      if (reply != null && (reply.equals("+PONG") || reply.startsWith("-NOAUTH"))) {
        return;
      }
      LockSupport.parkNanos(PING_RETRY_PAUSE.toNanos());
    }
    throw new IllegalStateException(
        "redis-server on " + host + ":" + port + " did not answer PING within " + READY_TIMEOUT);
  }

  /** Sends a RESP {@code PING} and expects {@code +PONG}, within {@code timeout}. */
  static boolean answersPing(String host, int port, Duration timeout) {
    return "+PONG".equals(pingReply(host, port, timeout));
  }

  /** The first line of the answer to a RESP {@code PING}, or null if none came in time. */
  private static String pingReply(String host, int port, Duration timeout) {
    try (Socket socket = new Socket()) {
      int millis = (int) timeout.toMillis();
      socket.connect(new InetSocketAddress(host, port), millis);
      socket.setSoTimeout(millis);
      OutputStream out = socket.getOutputStream();
      out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder line = new StringBuilder();
      for (int b = in.read(); b >= 0 && b != '\r' && line.length() < 256; b = in.read()) {
        line.append((char) b);
      }
      return line.toString();
    } catch (IOException e) {
      return null;
    }
  }
}
