package dev.runlane.processor.topology;

import dev.runlane.processor.dedup.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;

/** Meter names of the processor, in one place. */
public final class ProcessorMetrics {
  public static final String EVENTS = "runlane.processor.events";
  public static final String END_TO_END = "runlane.processor.end.to.end.latency";
  public static final String BATCH_SIZE = "runlane.processor.batch.size";
  public static final String DEGRADED = "runlane.processor.degraded.decisions";

  private final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
  private final Counter invalid;
  private final Counter degraded;
  private final Timer endToEnd;
  private final DistributionSummary batchSize;

  public ProcessorMetrics(MeterRegistry registry) {
    for (Outcome o : Outcome.values()) {
      outcomes.put(
          o,
          Counter.builder(EVENTS)
              .description("Events decided, by outcome and by the layer that decided")
              .tag("outcome", o.outcomeTag())
              .tag("layer", o.layerTag())
              .register(registry));
    }
    invalid =
        Counter.builder(EVENTS).tag("outcome", "invalid").tag("layer", "decode").register(registry);
    degraded =
        Counter.builder(DEGRADED)
            .description("Events decided on the run store alone because Redis did not answer")
            .register(registry);
    endToEnd =
        Timer.builder(END_TO_END)
            .description("From the ingress receiving the webhook to the event being applied")
            .publishPercentiles(0.5, 0.99)
            .register(registry);
    batchSize =
        DistributionSummary.builder(BATCH_SIZE)
            .description("Events decided per Redis round trip")
            .register(registry);
  }

  void outcome(Outcome outcome, int events) {
    outcomes.get(outcome).increment(events);
  }

  void invalid() {
    invalid.increment();
  }

  void degraded(int events) {
    degraded.increment(events);
  }

  void endToEnd(long receivedAtMillis) {
    long millis = System.currentTimeMillis() - receivedAtMillis;
    if (millis >= 0) {
      endToEnd.record(java.time.Duration.ofMillis(millis));
    }
  }

  void batch(int size) {
    batchSize.record(size);
  }
}
