package dev.runlane.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of a sink JVM while it writes: the restarted sink neither loses nor doubles a row, and
 * its stored offsets end at the topic's end.
 */
@RealInfra
class SinkCrashIT {
  @Test
  void killNineMidBatchThenRestartLosesAndDoublesNothing(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "crash", 6)) {
      int runs = 200;
      int perRun = 100;
      h.sendAll(runs, perRun, null);
      long total = (long) runs * perRun;

      for (int kill = 1; kill <= 2; kill++) {
        Process sink = startChild(h, "kill-" + kill);
        long before = h.count("SELECT count(*) FROM processed_events");
        // Killed while it writes: rows are landing, and the topic is not drained yet.
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () -> {
                  assertThat(sink.isAlive()).as("sink alive").isTrue();
                  return h.count("SELECT count(*) FROM processed_events") > before + 1000;
                });
        sink.destroyForcibly().waitFor();
        long atKill = h.count("SELECT count(*) FROM processed_events");
        assertThat(atKill).as("killed before it drained the topic").isLessThan(total);
        assertConsistent(h);
      }

      Process last = startChild(h, "final");
      try {
        h.awaitCaughtUp(Duration.ofSeconds(90));
      } finally {
        last.destroy();
        last.waitFor();
      }
      assertConsistent(h);
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(total);
      assertThat(h.count("SELECT count(*) FROM runs WHERE applied_count = " + perRun))
          .isEqualTo(runs);
      assertThat(h.runsNotAtEvent(perRun - 1)).isZero();
      assertConsistent(h);
    }
  }

  /**
   * The stored offsets account for exactly the rows stored: each partition's next offset is one
   * past the highest offset stored from it (every record of the topic is an event stored once).
   */
  private static void assertConsistent(SinkHarness h) throws Exception {
    Map<Integer, Long> stored = h.storedOffsets();
    long rowsCovered = stored.values().stream().mapToLong(Long::longValue).sum();
    assertThat(h.count("SELECT count(*) FROM processed_events"))
        .as("rows = records below the stored offsets")
        .isEqualTo(rowsCovered);
    for (var e : stored.entrySet()) {
      String rowsOf = "SELECT count(*) FROM processed_events WHERE kafka_partition = " + e.getKey();
      assertThat(h.count(rowsOf + " AND kafka_offset < " + e.getValue()))
          .as("rows below the stored offset of partition %d", e.getKey())
          .isEqualTo(e.getValue());
      assertThat(h.count(rowsOf + " AND kafka_offset >= " + e.getValue()))
          .as("rows past the stored offset of partition %d", e.getKey())
          .isZero();
    }
  }

  private static Process startChild(SinkHarness h, String name) throws IOException {
    // Small batches: many transactions, so the kill lands among them.
    return h.startChild("crash-" + name, Map.of("SINK_MAX_POLL_RECORDS", "200"))
        .awaitReady(Duration.ofSeconds(60))
        .process();
  }
}
