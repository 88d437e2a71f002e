package dev.runlane.ingress.http;

import dev.runlane.common.signature.SignatureException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The meter names of the ingress, in one place.
 *
 * <ul>
 *   <li>{@code runlane.ingress.requests{source,outcome}}: webhook requests by how they ended;
 *       {@code outcome} is one of {@link Outcome} or a signature failure reason ({@code
 *       timestamp_too_old}, {@code no_matching_signature}, ...), so that stale timestamps are
 *       counted apart from bad signatures;
 *   <li>{@code runlane.ingress.ack.latency{source,topic}}: from {@code send()} to the broker ack
 *       (failures are not recorded here but as {@code outcome=unavailable});
 *   <li>{@code runlane.ingress.in.flight}: requests received and not yet answered;
 *   <li>{@code runlane.ingress.control.view.age}: since the last read of the control topic began
 *       (webhooks are answered 503 beyond {@code INGRESS_CONTROL_STALE_MS}, D71).
 * </ul>
 */
public final class IngressMeters {

  public static final String REQUESTS = "runlane.ingress.requests";
  public static final String ACK_LATENCY = "runlane.ingress.ack.latency";
  public static final String IN_FLIGHT = "runlane.ingress.in.flight";
  public static final String CONTROL_VIEW_AGE = "runlane.ingress.control.view.age";

  /** How a webhook request ended, besides the signature failure reasons. */
  public enum Outcome {
    ACCEPTED,
    DEAD_LETTERED,
    TOO_LARGE,
    UNSUPPORTED_MEDIA_TYPE,
    UNAVAILABLE,
    /** An unexpected failure in the handler, answered 503 (a bug or a broken dependency). */
    INTERNAL_ERROR,
    ABORTED;

    /** The tag value, e.g. {@code dead_lettered}. */
    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();

  public IngressMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The age of the ingress's view of the control topic, read from {@code age}. */
  public void controlViewAge(Supplier<Duration> age) {
    Gauge.builder(CONTROL_VIEW_AGE, age, a -> a.get().toNanos() / 1e9)
        .baseUnit("seconds")
        .description(
            "Since the last read of the control topic began; webhooks are answered 503 beyond"
                + " INGRESS_CONTROL_STALE_MS")
        .register(registry);
  }

  /**
   * Registers every outcome of {@code source} at zero, so dashboards see them before they occur.
   */
  public void register(String source) {
    for (Outcome o : Outcome.values()) {
      counter(source, o.tag());
    }
    for (SignatureException.Reason r : SignatureException.Reason.values()) {
      counter(source, r.name().toLowerCase(Locale.ROOT));
    }
  }

  public void count(String source, Outcome outcome) {
    counter(source, outcome.tag()).increment();
  }

  public void rejected(String source, SignatureException e) {
    counter(source, e.code()).increment();
  }

  public void ackLatency(String source, String topicKind, Duration latency) {
    timers
        .computeIfAbsent(
            source + '\0' + topicKind,
            k ->
                Timer.builder(ACK_LATENCY)
                    .description("time from send to the broker's ack")
                    .tag("source", source)
                    .tag("topic", topicKind)
                    .publishPercentileHistogram()
                    .register(registry))
        .record(latency);
  }

  private Counter counter(String source, String outcome) {
    return counters.computeIfAbsent(
        source + '\0' + outcome,
        k ->
            Counter.builder(REQUESTS)
                .description("webhook requests by outcome")
                .tag("source", source)
                .tag("outcome", outcome)
                .register(registry));
  }
}
