package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.Metric;
import org.junit.jupiter.api.Test;

/** PROCESSOR_ROCKSDB_MEMORY_MB bounds the run stores' RocksDB memory, on the real broker. */
@RealInfra
class RunStoreMemoryIT {
  private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
  private static final long MIB = 1024 * 1024;

  /**
   * 24 MB of run states over three stores: with Streams' defaults (16 MB memtables per store) they
   * all stay in memtables, never flushed. With a 16 MB budget, the memtables get half of it, and
   * the stores share one 16 MB block cache instead of 50 MB each.
   */
  @Test
  void theRunStoresShareOneBudgetAndFlushWithinIt(Infra infra) throws Exception {
    int runs = 4_000;
    String padding = "p".repeat(6_000);
    try (ProcessorHarness h =
        new ProcessorHarness(
                infra.bootstrapServers(),
                EmbeddedRedis.shared().uri(),
                infra.uniqueName("rocksmem"),
                256)
            .with("PROCESSOR_ROCKSDB_MEMORY_MB", "16")
            .start()) {
      for (int i = 0; i < runs; i++) {
        h.sendAsync("run-" + i, "req-" + i, T0, padding);
      }
      h.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> h.count("applied", "store") == runs);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> sum(runStoreMetrics(h, "estimate-num-keys")) >= runs);

      List<Metric> capacities = runStoreMetrics(h, "block-cache-capacity");
      assertThat(capacities).as("one per run store (3 partitions)").hasSize(3);
      assertThat(capacities)
          .allSatisfy(m -> assertThat(value(m)).isEqualTo(16.0 * MIB)); // Streams: 50 MB each
      assertThat((double) runs * padding.length())
          .as("run states written, far over the memtables' 8 MB share")
          .isGreaterThan(16.0 * MIB);
      // Flushes run in the background: the bound holds once the last one is done.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(sum(runStoreMetrics(h, "size-all-mem-tables")))
                      .as("bytes in the run stores' memtables")
                      .isLessThanOrEqualTo(12.0 * MIB));
    }
  }

  /** The run stores' values of one RocksDB property metric of Streams (one per store). */
  private static List<Metric> runStoreMetrics(ProcessorHarness h, String name) {
    return h.app.streams().metrics().entrySet().stream()
        .filter(e -> e.getKey().group().equals("stream-state-metrics"))
        .filter(e -> e.getKey().name().equals(name))
        .filter(e -> "runs".equals(e.getKey().tags().get("rocksdb-state-id")))
        .map(e -> (Metric) e.getValue())
        .toList();
  }

  private static double sum(List<Metric> metrics) {
    return metrics.stream().mapToDouble(RunStoreMemoryIT::value).sum();
  }

  private static double value(Metric m) {
    return ((Number) m.metricValue()).doubleValue();
  }
}
