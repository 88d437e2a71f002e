package dev.runlane.bench.probe;

import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.stream.DoubleStream;
import org.apache.kafka.streams.KafkaStreams;

/**
 * What a processor in this JVM has done so far, from its own meters and its Streams client's
 * metrics: one reading minus an earlier one is what it did in between.
 */
public final class ProcessorMeters {
  private ProcessorMeters() {}

  /** The processor's timer of Redis round trips, one sample per claim or done pipeline. */
  public static final String REDIS_LATENCY = "runlane.processor.redis.latency";

  /** Redis round trips so far, and the time the processor's threads waited for them. */
  public record RedisTrips(long count, double waitMillis) {}

  public static RedisTrips redisTrips(MeterRegistry registry) {
    long count = 0;
    double waitMillis = 0;
    for (Timer t : registry.find(REDIS_LATENCY).timers()) {
      count += t.count();
      waitMillis += t.totalTime(TimeUnit.MILLISECONDS);
    }
    return new RedisTrips(count, waitMillis);
  }

  /** Redis round trips so far. */
  public static long roundTrips(MeterRegistry registry) {
    return redisTrips(registry).count();
  }

  /**
   * Input events decided so far (every outcome but "waiting"). A held event counts once: its
   * release counts it "applied" too, so the releases come off, or a window would count its events
   * decided before they all were.
   */
  public static double decided(MeterRegistry registry) {
    double outcomes =
        registry.find(ProcessorMetrics.EVENTS).counters().stream()
            .filter(c -> !"waiting".equals(c.getId().getTag("outcome")))
            .mapToDouble(Counter::count)
            .sum();
    return outcomes - released(registry);
  }

  /** Held events released so far: after their window, or early over the cap. */
  public static double released(MeterRegistry registry) {
    return counted(registry, ProcessorMetrics.REORDER, "event", "released")
        + counted(registry, ProcessorMetrics.REORDER, "event", "released_early");
  }

  /** The sum of the counters named {@code name} with {@code tag=value}. */
  public static double counted(MeterRegistry registry, String name, String tag, String value) {
    return registry.find(name).tag(tag, value).counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /** The values of one Streams client metric, one per thread, client or store that has it. */
  public static DoubleStream streamsMetric(KafkaStreams streams, String group, String name) {
    return streams.metrics().entrySet().stream()
        .filter(e -> e.getKey().group().equals(group) && e.getKey().name().equals(name))
        .map(e -> e.getValue().metricValue())
        .filter(Number.class::isInstance)
        .mapToDouble(v -> ((Number) v).doubleValue());
  }
}
