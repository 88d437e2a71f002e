package dev.runlane.local.simulator;

import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.local.simulator.Ledger.Failure;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Behaves as Sume does towards one webhook endpoint: every attempt is signed afresh ({@code
 * X-Sume-Timestamp} = the attempt's time), an attempt fails on a non-2xx status, a redirect (never
 * followed), a connection error or no answer within the attempt timeout (10 s), and a failed
 * delivery is retried on the {@link RetrySchedule}. On top, an {@link InjectionPlan} adds duplicate
 * deliveries of acked events, concurrent duplicates, reordered events and slow acks. Everything is
 * recorded in the {@link Ledger}.
 *
 * <p>Events are generated at a fixed rate by one thread ({@link #start}); deliveries are
 * asynchronous, so a slow or absent ingress never slows the generator. {@link #awaitIdle} waits
 * until every delivery has been acked or has given up.
 */
public final class SumeSimulator implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SumeSimulator.class);

  /** Sume's per-attempt timeout. */
  public static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(10);

  /**
   * @param target the webhook URL, e.g. {@code http://127.0.0.1:8080/webhooks/sume}
   * @param secret the signing secret
   * @param schedule the retry schedule (with its time scale)
   * @param attemptTimeout the per-attempt timeout ({@link #ATTEMPT_TIMEOUT})
   * @param injection what to inject
   * @param seed the workload seed
   * @param concurrentRuns how many runs interleave
   * @param minEventsPerRun fewest events of a run
   * @param maxEventsPerRun most events of a run
   */
  public record Settings(
      URI target,
      Secret secret,
      RetrySchedule schedule,
      Duration attemptTimeout,
      Injection injection,
      long seed,
      int concurrentRuns,
      int minEventsPerRun,
      int maxEventsPerRun) {

    /** Sume's behaviour with realistic injections, 20 interleaved runs of 3-8 events. */
    public static Settings of(URI target, Secret secret, double timeScale, long seed) {
      return new Settings(
          target,
          secret,
          RetrySchedule.SUME.withTimeScale(timeScale),
          ATTEMPT_TIMEOUT,
          Injection.realistic(),
          seed,
          20,
          3,
          8);
    }
  }

  private enum Kind {
    FIRST,
    CONCURRENT_COPY,
    REDELIVERY
  }

  private final Settings settings;
  private final Ledger ledger = new Ledger();
  private final InjectionPlan plan;
  private final ExecutorService httpExecutor;
  private final HttpClient client;
  private final ScheduledExecutorService scheduler;
  private final Object idle = new Object();
  private long inFlight; // guarded by idle
  private boolean generating; // guarded by idle
  private volatile boolean stopRequested;
  private Thread generator;

  public SumeSimulator(Settings settings) {
    this.settings = settings;
    this.plan =
        new InjectionPlan(
            settings.seed(),
            settings.injection(),
            settings.concurrentRuns(),
            settings.minEventsPerRun(),
            settings.maxEventsPerRun(),
            Instant.now());
    this.httpExecutor = Executors.newFixedThreadPool(2, daemon("sume-simulator-http"));
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(settings.attemptTimeout())
            .executor(httpExecutor)
            .build();
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemon("sume-simulator-retry"));
  }

  public Ledger ledger() {
    return ledger;
  }

  public Settings settings() {
    return settings;
  }

  /**
   * Starts generating events at {@code eventsPerSecond} until {@code maxEvents} were generated or
   * {@code duration} passed, whichever comes first; returns at once.
   */
  public synchronized void start(double eventsPerSecond, long maxEvents, Duration duration) {
    if (generator != null) {
      throw new IllegalStateException("already started");
    }
    if (!(eventsPerSecond > 0)) {
      throw new IllegalArgumentException("eventsPerSecond must be positive");
    }
    synchronized (idle) {
      generating = true;
    }
    generator =
        daemon("sume-simulator-generator")
            .newThread(() -> generate(eventsPerSecond, maxEvents, duration));
    generator.start();
  }

  /** Stops generating new events; deliveries already started go on. */
  public void stopGenerating() {
    stopRequested = true;
  }

  /**
   * Waits until generation ended and every delivery was acked or gave up.
   *
   * @return whether that happened within {@code timeout}
   */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (idle) {
      while (generating || inFlight > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(idle, left);
      }
      return true;
    }
  }

  /** Deliveries not yet finished (acked or given up), including scheduled extra deliveries. */
  public long inFlight() {
    synchronized (idle) {
      return inFlight;
    }
  }

  private void generate(double rate, long maxEvents, Duration duration) {
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    long intervalNanos = (long) (1e9 / rate);
    try {
      for (long n = 0; n < maxEvents && !stopRequested; n++) {
        long due = start + n * intervalNanos;
        if (due >= end) {
          break;
        }
        long wait = due - System.nanoTime();
        if (wait > 0) {
          LockSupport.parkNanos(wait); // pacing, not synchronization
        }
        dispatch(plan.next());
      }
    } catch (RuntimeException e) {
      log.error("simulator generator failed", e);
    } finally {
      synchronized (idle) {
        generating = false;
        idle.notifyAll();
      }
    }
  }

  private void dispatch(EventPlan p) {
    ledger.planned(p);
    for (int copy = 0; copy < p.concurrentCopies(); copy++) {
      startDelivery(p, copy == 0 ? Kind.FIRST : Kind.CONCURRENT_COPY);
    }
  }

  private void startDelivery(EventPlan p, Kind kind) {
    begin();
    ledger.deliveryStarted(kind == Kind.REDELIVERY);
    attempt(p, kind, "evt_" + UUID.randomUUID(), 1);
  }

  private void attempt(EventPlan p, Kind kind, String eventId, int n) {
    if (scheduler.isShutdown()) {
      end();
      return;
    }
    boolean slow = n == 1 && kind == Kind.FIRST && p.slowFirstAttempt();
    byte[] body = p.event().body();
    long ts = System.currentTimeMillis() / 1000;
    HttpRequest request =
        HttpRequest.newBuilder(settings.target())
            .timeout(slow ? settings.injection().slowAckTimeout() : settings.attemptTimeout())
            .header("Content-Type", "application/json")
            .header(SumeSignatureVerifier.EVENT_ID_HEADER, eventId)
            .header(SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(ts))
            .header(
                SumeSignatureVerifier.SIGNATURE_HEADER,
                SumeSignatureVerifier.sign(settings.secret(), ts, body))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    ledger.attempt(p.event().requestId(), n);
    try {
      client
          .sendAsync(request, HttpResponse.BodyHandlers.discarding())
          .whenComplete((response, error) -> onResult(p, kind, eventId, n, slow, response, error));
    } catch (RuntimeException e) { // e.g. the client is shut down
      onResult(p, kind, eventId, n, slow, null, e);
    }
  }

  private void onResult(
      EventPlan p,
      Kind kind,
      String eventId,
      int n,
      boolean slow,
      HttpResponse<Void> response,
      Throwable error) {
    try {
      Failure failure = classify(response, error);
      if (slow && failure == Failure.TIMEOUT) {
        ledger.slowAck();
      }
      if (failure == null) {
        if (ledger.acked(p.event().requestId())) {
          scheduleRedeliveries(p);
        }
        end();
        return;
      }
      ledger.failed(failure);
      if (settings.schedule().hasNext(n) && !scheduler.isShutdown()) {
        scheduler.schedule(
            () -> attempt(p, kind, eventId, n + 1),
            settings.schedule().delayAfter(n).toNanos(),
            TimeUnit.NANOSECONDS);
      } else {
        ledger.gaveUp();
        log.debug("gave up on {} after {} attempts", p.event().requestId(), n);
        end();
      }
    } catch (RuntimeException e) { // scheduler shut down under us
      end();
    }
  }

  private void scheduleRedeliveries(EventPlan p) {
    for (Duration nominal : p.redeliveryDelays()) {
      begin();
      try {
        scheduler.schedule(
            () -> {
              end(); // the delivery below counts itself
              startDelivery(p, Kind.REDELIVERY);
            },
            settings.schedule().compress(nominal).toNanos(),
            TimeUnit.NANOSECONDS);
      } catch (RuntimeException e) {
        end();
      }
    }
  }

  private static Failure classify(HttpResponse<Void> response, Throwable error) {
    if (error != null) {
      Throwable cause =
          error instanceof CompletionException && error.getCause() != null
              ? error.getCause()
              : error;
      if (cause instanceof HttpTimeoutException) {
        return Failure.TIMEOUT;
      }
      if (cause instanceof ConnectException || cause instanceof IOException) {
        return Failure.CONNECTION;
      }
      return Failure.CONNECTION;
    }
    int status = response.statusCode();
    if (status >= 200 && status < 300) {
      return null;
    }
    return status >= 300 && status < 400 ? Failure.REDIRECT : Failure.HTTP_ERROR;
  }

  private void begin() {
    synchronized (idle) {
      inFlight++;
    }
  }

  private void end() {
    synchronized (idle) {
      inFlight--;
      if (inFlight == 0) {
        idle.notifyAll();
      }
    }
  }

  /** Stops generating, drops scheduled retries and closes the HTTP client's threads. */
  @Override
  public void close() {
    stopRequested = true;
    Thread g;
    synchronized (this) {
      g = generator;
    }
    if (g != null) {
      try {
        g.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    scheduler.shutdownNow();
    httpExecutor.shutdownNow();
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
