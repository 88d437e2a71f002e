package dev.runlane.ingress.http;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook HTTP server's lifecycle: one Vert.x {@link HttpServer} per event loop on a shared
 * port, a count of the requests in flight, and a graceful shutdown that stops accepting, lets every
 * request in flight get its true answer, then closes the connections.
 */
public final class IngressServer {

  private static final Logger log = LoggerFactory.getLogger(IngressServer.class);
  private static final Duration BIND_TIMEOUT = Duration.ofSeconds(30);

  private final List<HttpServer> servers;
  private final AtomicInteger inFlight;
  private final AtomicBoolean shuttingDown;
  private final CompletableFuture<Void> drained;

  private IngressServer(
      List<HttpServer> servers,
      AtomicInteger inFlight,
      AtomicBoolean shuttingDown,
      CompletableFuture<Void> drained) {
    this.servers = servers;
    this.inFlight = inFlight;
    this.shuttingDown = shuttingDown;
    this.drained = drained;
  }

  /**
   * Binds {@code instances} servers (one per event loop) to {@code host:port} and returns when all
   * listen.
   *
   * @param port the port; 0 picks a free one, shared by all instances (see {@link #port()})
   * @throws IllegalStateException if the port cannot be bound
   */
  public static IngressServer start(
      Vertx vertx,
      String host,
      int port,
      int instances,
      Handler<HttpServerRequest> routes,
      MeterRegistry registry) {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicBoolean shuttingDown = new AtomicBoolean();
    CompletableFuture<Void> drained = new CompletableFuture<>();
    Gauge.builder(IngressMeters.IN_FLIGHT, inFlight, AtomicInteger::get)
        .description("webhook requests received and not yet answered")
        .register(registry);
    Handler<HttpServerRequest> tracked =
        request -> {
          inFlight.incrementAndGet();
          AtomicBoolean done = new AtomicBoolean();
          Handler<Void> finish =
              v -> {
                if (done.compareAndSet(false, true)
                    && inFlight.decrementAndGet() == 0
                    && shuttingDown.get()) {
                  drained.complete(null);
                }
              };
          HttpServerResponse response = request.response();
          response.endHandler(finish);
          response.closeHandler(finish);
          if (shuttingDown.get()) {
            response.putHeader(HttpHeaders.CONNECTION, HttpHeaders.CLOSE);
          }
          routes.handle(request);
        };
    List<HttpServer> servers = new ArrayList<>();
    // Vert.x shares one listening socket among servers asking for the same host:port; port 0 would
    // give each its own random port, so pick the free port first.
    int boundPort = port == 0 && instances > 1 ? freePort(host) : port;
    try {
      for (int i = 0; i < instances; i++) {
        int listenPort = boundPort;
        List<HttpServer> one = new ArrayList<>(1);
        // Each deployment gets its own event-loop context, so the servers spread over the loops.
        await(
            vertx.deployVerticle(
                context -> {
                  HttpServer server = vertx.createHttpServer(options(host, listenPort));
                  server.requestHandler(tracked);
                  one.add(server);
                  return server.listen();
                }));
        servers.add(one.get(0));
        boundPort = one.get(0).actualPort();
      }
    } catch (RuntimeException e) {
      servers.forEach(s -> s.close());
      throw new IllegalStateException("cannot listen on " + host + ":" + port, e);
    }
    log.info("webhook server listening on {}:{} ({} event loops)", host, boundPort, instances);
    return new IngressServer(List.copyOf(servers), inFlight, shuttingDown, drained);
  }

  /** The bound port. */
  public int port() {
    return servers.get(0).actualPort();
  }

  /** Requests received and not yet answered. */
  public int inFlight() {
    return inFlight.get();
  }

  /**
   * Stops accepting connections, waits up to {@code grace} for the requests in flight to be
   * answered (each with its true answer), then closes the remaining connections.
   *
   * @return whether every request in flight was answered within {@code grace}
   */
  public boolean shutdown(Duration grace) {
    if (!shuttingDown.compareAndSet(false, true)) {
      return true;
    }
    long deadline = System.nanoTime() + grace.toNanos();
    if (inFlight.get() == 0) {
      drained.complete(null);
    }
    log.info("webhook server shutting down; {} requests in flight", inFlight.get());
    List<Future<Void>> closing = new ArrayList<>();
    for (HttpServer server : servers) {
      closing.add(server.shutdown(grace.toMillis(), TimeUnit.MILLISECONDS));
    }
    boolean clean = true;
    try {
      drained.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      clean = false;
      log.warn("{} requests still in flight after {}; closing", inFlight.get(), grace);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      clean = false;
    }
    for (Future<Void> f : closing) {
      try {
        f.toCompletionStage()
            .toCompletableFuture()
            .get(Math.max(1, deadline - System.nanoTime()) + 1_000_000_000L, TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        log.debug("server shutdown did not complete cleanly", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return clean;
  }

  private static int freePort(String host) {
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(host))) {
      return probe.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find a free port on " + host, e);
    }
  }

  private static HttpServerOptions options(String host, int port) {
    return new HttpServerOptions()
        .setHost(host)
        .setPort(port)
        .setHttp2ClearTextEnabled(false)
        .setCompressionSupported(false)
        .setDecompressionSupported(false)
        .setIdleTimeout(60)
        .setIdleTimeoutUnit(TimeUnit.SECONDS)
        .setReuseAddress(true);
  }

  private static <T> T await(Future<T> future) {
    try {
      return future
          .toCompletionStage()
          .toCompletableFuture()
          .get(BIND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("server did not start within " + BIND_TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the server", e);
    }
  }
}
