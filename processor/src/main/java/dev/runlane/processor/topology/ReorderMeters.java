package dev.runlane.processor.topology;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * The reorder window's meters (D46): held events released on time, early or late, and how long past
 * its window each waited. Held is {@code runlane_processor_events_total{outcome="held"}}.
 */
final class ReorderMeters {
  private final Counter released;
  private final Counter releasedEarly;
  private final Counter late;
  private final Timer releaseDelay;

  ReorderMeters(MeterRegistry registry) {
    released =
        Counter.builder(ProcessorMetrics.REORDER)
            .description(
                "Held events applied: after their window, early (over the cap on held events), or"
                    + " late (arrived older than their run's applied state, so stale)")
            .tag("event", "released")
            .register(registry);
    releasedEarly =
        Counter.builder(ProcessorMetrics.REORDER).tag("event", "released_early").register(registry);
    late = Counter.builder(ProcessorMetrics.REORDER).tag("event", "late").register(registry);
    // How long past its window a held event waited: a partition's time moves on only with a later
    // record or the idle clock, so this is what the window costs beyond W itself. Only events whose
    // window had ended count (one released with an older event of its run may not be due yet); the
    // wall clock against the ingress's receive time, so a replay or a backlog shows its lag here.
    releaseDelay =
        ProcessorMetrics.latency(
            ProcessorMetrics.RELEASE_DELAY,
            "From a held event's window ending (its record timestamp + the window) to its"
                + " release, on the wall clock",
            registry);
  }

  void released(boolean early, int events) {
    (early ? releasedEarly : released).increment(events);
  }

  /** A held event released at {@code nowMs} whose window ended at {@code dueMs}. */
  void releasedAfter(long dueMs, long nowMs) {
    if (nowMs >= dueMs) {
      releaseDelay.record(nowMs - dueMs, TimeUnit.MILLISECONDS);
    }
  }

  void late() {
    late.increment();
  }
}
