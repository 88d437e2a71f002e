package dev.runlane.processor.topology;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.processor.dedup.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.header.Headers;

/** Meter names of the processor, in one place. */
public final class ProcessorMetrics {
  public static final String EVENTS = "runlane.processor.events";
  public static final String END_TO_END = "runlane.processor.end.to.end.latency";
  public static final String RECEIVE_TO_READ = "runlane.processor.receive.to.read.latency";
  public static final String BATCH_SIZE = "runlane.processor.batch.size";
  public static final String DEGRADED = "runlane.processor.degraded.decisions";
  public static final String REPLAYED = "runlane.processor.replayed";
  public static final String UNKNOWN_MARKERS = "runlane.processor.unknown.markers";
  public static final String APPLY_FAILURES = "runlane.processor.apply.failures";
  public static final String REDIS_BUDGET_SPENT = "runlane.processor.redis.budget.spent";
  public static final String REORDER = "runlane.processor.reorder.events";
  public static final String RELEASE_DELAY = "runlane.processor.reorder.release.delay";

  private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
  private final Counter invalid;
  private final Counter degraded;
  private final Counter replayedSilent;
  private final Counter unknownMarkers;
  private final Counter replayedMarked;
  private final Counter applyRetried;
  private final Counter applyDeadLettered;
  private final Counter redisBudgetSpent;
  private final ReorderMeters reorder;
  private final Timer endToEnd;
  private final Timer receiveToRead;
  private final DistributionSummary batchSize;

  public ProcessorMetrics(MeterRegistry registry) {
    for (Outcome o : Outcome.values()) {
      outcomes.put(o, outcomeCounter(o, registry));
    }
    invalid =
        Counter.builder(EVENTS).tag("outcome", "invalid").tag("layer", "decode").register(registry);
    degraded =
        Counter.builder(DEGRADED)
            .description("Events decided on the run store alone because Redis did not answer")
            .register(registry);
    // A replaying generation's re-derived events (D35): silent ones leave no output, marked ones
    // are emitted again with the runlane.replay header.
    replayedSilent =
        Counter.builder(REPLAYED)
            .description("Events of a replay range re-decided, by what was emitted for them")
            .tag("range", "silent")
            .register(registry);
    replayedMarked = Counter.builder(REPLAYED).tag("range", "marked").register(registry);
    unknownMarkers =
        Counter.builder(UNKNOWN_MARKERS)
            .description(
                "Events whose Redis key held a value that is no runlane marker: decided on the run"
                    + " store alone")
            .register(registry);
    // An event whose decision threw: tried again from the last commit, then dead-lettered (D43).
    applyRetried =
        Counter.builder(APPLY_FAILURES)
            .description(
                "Events whose decision threw: retried from the last commit, or dead-lettered as"
                    + " apply_failed after their last attempt")
            .tag("result", "retried")
            .register(registry);
    applyDeadLettered =
        Counter.builder(APPLY_FAILURES).tag("result", "dead_lettered").register(registry);
    redisBudgetSpent =
        Counter.builder(REDIS_BUDGET_SPENT)
            .description(
                "Batches that found their transaction's Redis time spent: decided on the run store"
                    + " (degrade mode) or left parked for the next transaction (block mode)")
            .register(registry);
    reorder = new ReorderMeters(registry);
    endToEnd =
        latency(
            END_TO_END,
            "From the ingress receiving the webhook to the event being applied",
            registry);
    // Next to END_TO_END it says whether a late event was late reaching the stream thread
    // (consumer lag, a thread that polls late) or in the thread's own batching and decisions.
    receiveToRead =
        latency(
            RECEIVE_TO_READ,
            "From the ingress receiving the webhook to the processor reading it",
            registry);
    batchSize =
        DistributionSummary.builder(BATCH_SIZE)
            .description("Events decided per Redis round trip")
            .register(registry);
  }

  private static Counter outcomeCounter(Outcome o, MeterRegistry registry) {
    return Counter.builder(EVENTS)
        .description("Events decided, by outcome and by the layer that decided")
        .tag("outcome", o.outcomeTag())
        .tag("layer", o.layerTag())
        .register(registry);
  }

  /** A latency from 1 ms to 30 s, as percentiles and as buckets. */
  static Timer latency(String name, String description, MeterRegistry registry) {
    return Timer.builder(name)
        .description(description)
        .publishPercentiles(0.5, 0.99)
        // Buckets too, so that latencies can be aggregated across pods (a quantile cannot).
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
  }

  void outcome(Outcome outcome, int events) {
    outcomes.get(outcome).increment(events);
  }

  void invalid() {
    invalid.increment();
  }

  void applyFailed(boolean deadLettered) {
    (deadLettered ? applyDeadLettered : applyRetried).increment();
  }

  void released(boolean early, int events) {
    reorder.released(early, events);
  }

  /** A held event released at {@code nowMs} whose window ended at {@code dueMs}. */
  void releasedAfter(long dueMs, long nowMs) {
    reorder.releasedAfter(dueMs, nowMs);
  }

  void late() {
    reorder.late();
  }

  void redisBudgetSpent() {
    redisBudgetSpent.increment();
  }

  void unknownMarker() {
    unknownMarkers.increment();
  }

  void replayed(boolean marked) {
    (marked ? replayedMarked : replayedSilent).increment();
  }

  void degraded(int events) {
    degraded.increment(events);
  }

  /** An event read from the input topic, with the headers the ingress wrote. */
  void read(Headers headers) {
    sinceReceived(receiveToRead, headers);
  }

  /** An event applied to its run. */
  void applied(Headers headers) {
    sinceReceived(endToEnd, headers);
  }

  private static void sinceReceived(Timer timer, Headers headers) {
    String receivedAt = RecordHeaders.get(headers, RecordHeaders.RECEIVED_AT);
    if (receivedAt == null) {
      return; // an older or foreign producer: no sample
    }
    long millis;
    try {
      millis = System.currentTimeMillis() - Long.parseLong(receivedAt);
    } catch (NumberFormatException e) {
      return;
    }
    if (millis >= 0) {
      timer.record(millis, TimeUnit.MILLISECONDS);
    }
  }

  void batch(int size) {
    batchSize.record(size);
  }
}
