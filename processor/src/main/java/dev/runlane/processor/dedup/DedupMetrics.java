package dev.runlane.processor.dedup;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** Meter names of the dedup layer. A timer's count is the number of Redis round trips. */
final class DedupMetrics {
  static final String REDIS_LATENCY = "runlane.processor.redis.latency";
  static final String REDIS_AVAILABLE = "runlane.processor.redis.available";
  static final String NODE_FALLBACKS = "runlane.processor.redis.node.fallbacks";

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

  static void availability(MeterRegistry registry, NodeHealth health) {
    Gauge.builder(REDIS_AVAILABLE, health, h -> h.allAnswering() ? 1 : 0)
        .description(
            "0 while a Redis node failed within the last two back-off periods (its keys decided"
                + " on the run store alone), else 1")
        .register(registry);
  }

  /** Keys decided on the run store because the node holding them did not answer (D82). */
  static Counter nodeFallbacks(MeterRegistry registry, String node) {
    return Counter.builder(NODE_FALLBACKS)
        .description(
            "Claims the Redis node holding their key did not answer, by node: decided on the run"
                + " store alone (a claim asked again counts again)")
        .tag("node", node)
        .register(registry);
  }
}
