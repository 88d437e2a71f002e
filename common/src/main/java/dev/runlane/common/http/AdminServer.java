package dev.runlane.common.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management HTTP server of a service, on the JDK's built-in server: liveness, readiness,
 * Prometheus metrics, and optional extra routes.
 *
 * <ul>
 *   <li>{@code GET /health/live}: 200 {@code {"status":"UP"}} while the process serves requests and
 *       can recover on its own, else 503 {@code {"status":"DOWN"}};
 *   <li>{@code GET /health/ready}: 200 {@code {"status":"UP"}} or 503 {@code {"status":"DOWN"}};
 *   <li>{@code GET /metrics}: Prometheus text format 0.0.4;
 *   <li>extra routes, by context path prefix (e.g. {@code /runs/}), as given;
 *   <li>anything else: 404, or 405 for another method than GET/HEAD on a built-in path, with {@link
 *       ErrorBody}.
 * </ul>
 *
 * <p>Requests run on a bounded pool of two daemon threads (queue of 64; beyond that the connection
 * is closed). Handlers are synchronous: the exchange is closed when the handler returns, and an
 * exception before the response was sent becomes a 500. Probes are not logged.
 */
public final class AdminServer implements AutoCloseable {

  /** The content type of {@code /metrics}. */
  public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  public static final String LIVE_PATH = "/health/live";
  public static final String READY_PATH = "/health/ready";
  public static final String METRICS_PATH = "/metrics";

  /**
   * The JDK server's switch for {@code TCP_NODELAY} on its connections, off by default. It writes a
   * response's headers and its body in two writes, so with Nagle's algorithm on the body waits for
   * the client's delayed ACK of the headers: every request after the first on a kept-alive
   * connection (Prometheus scrapes, {@code /runs/} queries) took about 40 ms more (D31). The JDK
   * reads the property once per JVM, when its first server starts, so it is set before that; a
   * value given on the command line is kept.
   */
  static final String NODELAY_PROPERTY = "sun.net.httpserver.nodelay";

  static {
    if (System.getProperty(NODELAY_PROPERTY) == null) {
      System.setProperty(NODELAY_PROPERTY, "true");
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(AdminServer.class);
  private static final byte[] UP = "{\"status\":\"UP\"}".getBytes(StandardCharsets.UTF_8);
  private static final byte[] DOWN = "{\"status\":\"DOWN\"}".getBytes(StandardCharsets.UTF_8);
  private static final int THREADS = 2;
  private static final int QUEUE = 64;

  private final HttpServer server;
  private final ThreadPoolExecutor executor;
  private final AtomicBoolean closed = new AtomicBoolean();

  private AdminServer(HttpServer server, ThreadPoolExecutor executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds and starts the server.
   *
   * @param host the address to bind, e.g. {@code 0.0.0.0}; null or empty = all addresses
   * @param port the port; 0 picks a free one (see {@link #port()})
   * @param registry scraped by {@code /metrics}
   * @param ready whether the service is ready (called per request; an exception counts as not
   *     ready)
   * @param extraRoutes context path to handler, e.g. {@code "/runs/"}; must not clash with the
   *     built-in paths
   * @throws UncheckedIOException if the address cannot be bound
   */
  public static AdminServer start(
      String host,
      int port,
      PrometheusMeterRegistry registry,
      BooleanSupplier ready,
      Map<String, HttpHandler> extraRoutes) {
    return start(host, port, registry, () -> true, ready, extraRoutes);
  }

  /**
   * Binds and starts the server, with {@code /health/live} answering 503 while {@code live} is
   * false (a service that cannot recover without a restart), so that an orchestrator restarts it.
   */
  public static AdminServer start(
      String host,
      int port,
      PrometheusMeterRegistry registry,
      BooleanSupplier live,
      BooleanSupplier ready,
      Map<String, HttpHandler> extraRoutes) {
    Objects.requireNonNull(live, "live");
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(ready, "ready");
    Objects.requireNonNull(extraRoutes, "extraRoutes");
    InetSocketAddress address =
        host == null || host.isEmpty()
            ? new InetSocketAddress(port)
            : new InetSocketAddress(host, port);
    HttpServer server;
    try {
      server = HttpServer.create(address, QUEUE);
    } catch (IOException e) {
      throw new UncheckedIOException("admin server cannot listen on " + address, e);
    }
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            0,
            TimeUnit.MILLISECONDS,
            new ArrayBlockingQueue<>(QUEUE),
            daemonThreads(),
            new ThreadPoolExecutor.AbortPolicy());
    server.setExecutor(executor);
    server.createContext("/", guarded(AdminServer::notFound));
    server.createContext(
        LIVE_PATH,
        guarded(
            get(
                LIVE_PATH,
                ex -> {
                  boolean up = isReady(live);
                  send(ex, up ? 200 : 503, ErrorBody.CONTENT_TYPE, up ? UP : DOWN);
                })));
    server.createContext(
        READY_PATH,
        guarded(
            get(
                READY_PATH,
                ex -> {
                  boolean up = isReady(ready);
                  send(ex, up ? 200 : 503, ErrorBody.CONTENT_TYPE, up ? UP : DOWN);
                })));
    server.createContext(
        METRICS_PATH,
        guarded(
            get(
                METRICS_PATH,
                ex -> {
                  ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
                  registry.scrape(out, PROMETHEUS_CONTENT_TYPE);
                  send(ex, 200, PROMETHEUS_CONTENT_TYPE, out.toByteArray());
                })));
    extraRoutes.forEach((path, handler) -> server.createContext(path, guarded(handler)));
    server.start();
    LOG.info("admin server listening on {}", server.getAddress());
    return new AdminServer(server, executor);
  }

  /** The bound port (the actual one when started with port 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Stops accepting, drops open connections, and stops the threads, within about a second. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    server.stop(0);
    executor.shutdown();
    try {
      if (!executor.awaitTermination(500, TimeUnit.MILLISECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Writes a complete response and closes the exchange. For HEAD only the headers are sent.
   *
   * @throws IOException if the client went away
   */
  public static void send(HttpExchange exchange, int status, String contentType, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equalsIgnoreCase(exchange.getRequestMethod());
    if (head || body.length == 0) {
      exchange.sendResponseHeaders(status, -1);
    } else {
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
    exchange.close();
  }

  /** Writes an {@link ErrorBody} response. */
  public static void sendError(HttpExchange exchange, int status, String code, String message)
      throws IOException {
    send(exchange, status, ErrorBody.CONTENT_TYPE, ErrorBody.json(code, message));
  }

  private static void notFound(HttpExchange exchange) throws IOException {
    sendError(exchange, 404, "not_found", "no such path");
  }

  private static HttpHandler get(String path, HttpHandler handler) {
    return exchange -> {
      if (!path.equals(exchange.getRequestURI().getPath())) {
        notFound(exchange);
        return;
      }
      String method = exchange.getRequestMethod();
      if (!"GET".equals(method) && !"HEAD".equals(method)) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        sendError(exchange, 405, "method_not_allowed", "use GET");
        return;
      }
      handler.handle(exchange);
    };
  }

  private static HttpHandler guarded(HttpHandler handler) {
    return exchange -> {
      try {
        handler.handle(exchange);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "admin request {} {} failed",
            exchange.getRequestMethod(),
            exchange.getRequestURI().getPath(),
            e);
        if (exchange.getResponseCode() == -1) {
          try {
            sendError(exchange, 500, "internal_error", "internal error");
          } catch (IOException | RuntimeException ignored) {
            // the client is gone; nothing more to do
          }
        }
      } finally {
        exchange.close();
      }
    };
  }

  private static boolean isReady(BooleanSupplier ready) {
    try {
      return ready.getAsBoolean();
    } catch (RuntimeException e) {
      LOG.debug("readiness check failed", e);
      return false;
    }
  }

  private static ThreadFactory daemonThreads() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "runlane-admin-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
