package dev.runlane.processor.dedup;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/** Meter names of the dedup layer. A timer's count is the number of Redis round trips. */
final class DedupMetrics {
  static final String REDIS_LATENCY = "runlane.processor.redis.latency";
  static final String REDIS_AVAILABLE = "runlane.processor.redis.available";

  private DedupMetrics() {}

  static Timer redisLatency(MeterRegistry registry, String op) {
    return Timer.builder(REDIS_LATENCY)
        .description("One pipelined Redis round trip for a whole batch")
        .tag("op", op)
        .publishPercentiles(0.5, 0.99)
        // Buckets too, so that latencies can be aggregated across pods (a quantile cannot).
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
  }

  static void availability(MeterRegistry registry, AtomicBoolean available) {
    Gauge.builder(REDIS_AVAILABLE, available, a -> a.get() ? 1 : 0)
        .description(
            "1 when the last Redis call succeeded, 0 while deciding on the run store alone")
        .register(registry);
  }
}
