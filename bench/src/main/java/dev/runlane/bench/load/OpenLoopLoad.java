package dev.runlane.bench.load;

import dev.runlane.bench.probe.ThreadCpu;
import dev.runlane.bench.report.Latency;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;

/**
 * An open-loop, constant-rate HTTP load generator: a scheduler thread releases each request at its
 * intended start time ({@link RateSchedule}) onto a non-blocking Vert.x client with a large
 * connection pool; the latency of a request is measured from its intended start to its complete
 * response, so queueing anywhere (client pool, server, broker) is counted.
 *
 * <p>It shares the machine with what it measures; its own event loops are part of the load.
 */
public final class OpenLoopLoad implements AutoCloseable {

  /** Called on a client event loop when a request was answered 2xx. */
  public interface OnAccepted {
    void accepted(Webhooks.Signed request, long answeredNanos, boolean measured);
  }

  /**
   * The outcome of one run.
   *
   * @param rate the intended rate (requests/s)
   * @param measuredSeconds the length of the measured window
   * @param sent requests released in the measured window
   * @param ok 2xx answers to them
   * @param failed non-2xx answers from the server
   * @param errors requests that got no HTTP answer (connection reset, refused, timed out)
   * @param firstError what the first of those errors was, or null
   * @param latency intended start to complete response, 2xx only
   * @param cpuMillis this process's CPU time (all threads: broker, servers, load generator) from
   *     the release of the first measured request to the last measured answer, 0 without {@code
   *     /proc}; two servers measured at the same rate differ by their own work per request
   */
  public record Result(
      double rate,
      double measuredSeconds,
      long sent,
      long ok,
      long failed,
      long errors,
      String firstError,
      long unanswered,
      Latency.Summary latency,
      long cpuMillis) {
    public double achieved() {
      return ok / measuredSeconds;
    }

    /** Process CPU microseconds per measured request (see {@code cpuMillis}). */
    public double cpuMicrosPerRequest() {
      return sent == 0 ? 0 : cpuMillis * 1000.0 / sent;
    }

    /**
     * Every request answered 2xx. A client-side error counts against the step too: from here the
     * generator starving its own event loop cannot be told from the server dropping a connection,
     * so the step reports the error's cause instead of guessing.
     */
    public boolean keptUp() {
      return failed == 0 && errors == 0 && unanswered == 0 && ok >= sent * 0.99;
    }

    @Override
    public String toString() {
      return String.format(
          "rate %,.0f/s: ok %,.0f/s (%d ok, %d non-2xx, %d client errors, %d unanswered), %s%s%s",
          rate,
          achieved(),
          ok,
          failed,
          errors,
          unanswered,
          latency,
          cpuMillis > 0
              ? String.format(", process CPU %.0f us/request", cpuMicrosPerRequest())
              : "",
          firstError == null ? "" : "; first client error: " + firstError);
    }
  }

  private static final Duration DRAIN = Duration.ofSeconds(15);

  private final Vertx vertx;
  private final HttpClientAgent client;
  private final Context context;

  /**
   * @param connections the connection pool size (HTTP/1.1, no pipelining)
   * @param eventLoops the client's event loops
   */
  public OpenLoopLoad(int connections, int eventLoops) {
    this.vertx =
        Vertx.vertx(
            new VertxOptions().setEventLoopPoolSize(eventLoops).setPreferNativeTransport(false));
    this.client =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setKeepAlive(true)
                .setTcpNoDelay(true)
                .setConnectTimeout(5_000)
                // Below the ingress's 60 s: a client that keeps an idle connection as long as the
                // server does sometimes sends on it just as the server closes it, and that request
                // fails with "Connection was closed" (3 in a 60 s window at 1k/s, enough to end
                // an ingress capacity search early).
                .setIdleTimeout(30),
            new PoolOptions()
                .setHttp1MaxSize(connections)
                .setEventLoopSize(eventLoops)
                .setMaxWaitQueueSize(-1));
    this.context = vertx.getOrCreateContext();
  }

  /**
   * Sends {@code rate} requests/s for {@code warmup + measure}; only requests released in the
   * measured window count.
   */
  public Result run(
      int port,
      double rate,
      Duration warmup,
      Duration measure,
      LongFunction<Webhooks.Signed> requests,
      OnAccepted onAccepted) {
    long warmupCount = (long) Math.floor(warmup.toNanos() / 1e9 * rate);
    long total = warmupCount + (long) Math.floor(measure.toNanos() / 1e9 * rate);
    Latency latency = new Latency();
    AtomicLong ok = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicReference<String> firstError = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch((int) (total - warmupCount));
    RateSchedule schedule = new RateSchedule(System.nanoTime() + 20_000_000L, rate);
    long released = 0;
    long cpuAtMeasureStart = -1;
    while (released < total) {
      long now = System.nanoTime();
      long due = Math.min(total, schedule.dueBy(now));
      if (cpuAtMeasureStart < 0 && due > warmupCount) {
        cpuAtMeasureStart = ThreadCpu.processMillis();
      }
      if (due > released) {
        long from = released;
        long to = due;
        released = due;
        context.runOnContext(
            v -> {
              for (long i = from; i < to; i++) {
                boolean measured = i >= warmupCount;
                send(
                    port,
                    requests.apply(i),
                    schedule.intendedStart(i),
                    measured,
                    latency,
                    ok,
                    failed,
                    errors,
                    firstError,
                    done,
                    onAccepted);
              }
            });
      } else {
        // Sleep to the next intended start, never spin: spinning out the last 60 us before each
        // start took a share of a core from the servers on this 2-core box, and all of one above
        // ~16.7k/s, where every gap is shorter. The timer's slack releases a request up to
        // ~0.1 ms late, and in a group with the ones due by then; latency runs from the intended
        // start, so that lateness is counted, not hidden.
        LockSupport.parkNanos(schedule.intendedStart(released) - System.nanoTime());
      }
    }
    try {
      done.await(DRAIN.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long cpuMillis =
        cpuAtMeasureStart < 0 ? 0 : Math.max(0, ThreadCpu.processMillis() - cpuAtMeasureStart);
    long sent = total - warmupCount;
    long answered = ok.get() + failed.get() + errors.get();
    return new Result(
        rate,
        measure.toNanos() / 1e9,
        sent,
        ok.get(),
        failed.get(),
        errors.get(),
        firstError.get(),
        Math.max(0, sent - answered),
        latency.summary(),
        cpuMillis);
  }

  private void send(
      int port,
      Webhooks.Signed w,
      long intended,
      boolean measured,
      Latency latency,
      AtomicLong ok,
      AtomicLong failed,
      AtomicLong errors,
      AtomicReference<String> firstError,
      CountDownLatch done,
      OnAccepted onAccepted) {
    MultiMap headers = HttpHeaders.headers();
    headers
        .add(HttpHeaders.CONTENT_TYPE, "application/json")
        .add("X-Sume-Event-Id", w.eventId())
        .add("X-Sume-Timestamp", Long.toString(w.timestamp()))
        .add("X-Sume-Signature", w.signature())
        .add(Webhooks.RUN_ID_HEADER, w.runId())
        .add(Webhooks.REQUEST_ID_HEADER, w.requestId())
        .add(Webhooks.CREATED_AT_HEADER, w.createdAt());
    RequestOptions options =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost("127.0.0.1")
            .setPort(port)
            .setURI(Webhooks.PATH)
            .setHeaders(headers);
    client
        .request(options)
        .compose(req -> req.send(Buffer.buffer(w.body())))
        .compose(resp -> resp.body().map(b -> resp.statusCode()))
        .onComplete(
            ar -> {
              long now = System.nanoTime();
              boolean accepted = ar.succeeded() && ar.result() / 100 == 2;
              if (accepted && onAccepted != null) {
                onAccepted.accepted(w, now, measured);
              }
              if (!measured) {
                return;
              }
              if (accepted) {
                latency.recordNanos(now - intended);
                ok.incrementAndGet();
              } else if (ar.succeeded()) {
                failed.incrementAndGet();
              } else {
                errors.incrementAndGet();
                firstError.compareAndSet(null, ar.cause().toString());
              }
              done.countDown();
            });
  }

  @Override
  public void close() {
    try {
      client.close().await(5, TimeUnit.SECONDS);
      vertx.close().await(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      // best effort
    }
  }
}
