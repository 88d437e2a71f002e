package dev.runlane.sink;

import static dev.runlane.sink.SinkHarness.T0;
import static dev.runlane.sink.SinkHarness.counter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The sink in this JVM on a real broker and a real PostgreSQL. */
@RealInfra
class SinkIT {

  /**
   * A reprocess from T emits the events since T once more, marked as replayed (G2's one exception);
   * copies within a batch and across batches are absorbed by the primary key.
   */
  @Test
  void reEmittedEventsAreAllAbsorbedByTheConstraint(Infra infra) throws Exception {
    int runs = 20;
    int perRun = 10;
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "replay", 4)) {
      PrometheusMeterRegistry registry = SinkHarness.registry();
      SinkApp sink = h.startSink(registry);
      try (sink) {
        h.sendAll(runs, perRun, null);
        h.awaitCaughtUp(Duration.ofSeconds(60));
        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(runs * perRun);

        // The replay: the same request ids again, plus each one twice in a row.
        for (int copy = 0; copy < 2; copy++) {
          h.sendAll(runs, perRun, "reprocess-1");
        }
        h.awaitCaughtUp(Duration.ofSeconds(60));

        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(runs * perRun);
        assertThat(h.count("SELECT count(*) FROM processed_events WHERE replay IS NOT NULL"))
            .as("the first copies stay: a re-emission stores nothing")
            .isZero();
        assertThat(counter(registry, SinkMetrics.EVENTS, "written")).isEqualTo(runs * perRun);
        assertThat(counter(registry, SinkMetrics.EVENTS, "duplicate"))
            .isEqualTo(2.0 * runs * perRun);
        assertThat(h.count("SELECT count(*) FROM runs")).isEqualTo(runs);
        assertThat(h.count("SELECT count(*) FROM runs WHERE applied_count <> " + perRun))
            .as("runs whose count moved with a re-emission")
            .isZero();
        assertThat(h.runsNotAtEvent(perRun - 1)).as("runs not at their newest event").isZero();
      }
    }
  }

  @Test
  void olderEventsNeverMoveARunBackwards(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "order", 1)) {
      PrometheusMeterRegistry registry = SinkHarness.registry();
      SinkApp sink = h.startSink(registry);
      try (sink) {
        h.send("run-o", "c", T0.plusSeconds(2), null);
        h.flush();
        h.awaitCaughtUp(Duration.ofSeconds(30));
        // Older in created_at, then same created_at but a smaller request id, in later batches.
        h.send("run-o", "a", T0, null);
        h.flush();
        h.awaitCaughtUp(Duration.ofSeconds(30));
        h.send("run-o", "b", T0.plusSeconds(2).minusNanos(1), null);
        h.send("run-o", "B", T0.plusSeconds(2), null); // 'B' < 'c' in code points
        h.flush();
        h.awaitCaughtUp(Duration.ofSeconds(30));

        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(4);
        assertThat(h.onlyRow("SELECT last_request_id, applied_count FROM runs"))
            .containsExactly("c", 1L);
        assertThat(counter(registry, SinkMetrics.RUNS, "refused")).isEqualTo(2);

        // A newer one still moves it, by a nanosecond.
        h.send("run-o", "a", T0.plusSeconds(2).plusNanos(1), null); // same id: a duplicate
        h.send("run-o", "d", T0.plusSeconds(2).plusNanos(1), null);
        h.flush();
        h.awaitCaughtUp(Duration.ofSeconds(30));
        assertThat(h.onlyRow("SELECT last_request_id, last_created_at_nanos FROM runs"))
            .containsExactly("d", 1);
        assertThat(counter(registry, SinkMetrics.EVENTS, "duplicate")).isEqualTo(1);
      }
    }
  }

  @Test
  void aRestartSeeksToTheStoredOffsetsNotToKafkas(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "restart", 3)) {
      SinkApp first = h.startSink(SinkHarness.registry());
      try (first) {
        h.sendAll(6, 5, null);
        h.awaitCaughtUp(Duration.ofSeconds(30));
      }
      // Rows deleted behind the sink's back, offsets kept: a restart must not write them again,
      // which it would if it went by anything but the stored offsets.
      try (Connection c = h.connect();
          Statement s = c.createStatement()) {
        assertThat(s.executeUpdate("DELETE FROM processed_events WHERE run_id = 'run-0'"))
            .isEqualTo(5);
      }
      PrometheusMeterRegistry registry = SinkHarness.registry();
      SinkApp restarted = h.startSink(registry);
      try (restarted) {
        h.sendAll(1, 1, null); // run-0-e0 again: the sink writes it as new, nothing else
        h.awaitCaughtUp(Duration.ofSeconds(30));
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> counter(registry, SinkMetrics.EVENTS, "written") == 1);
        assertThat(counter(registry, SinkMetrics.EVENTS, "duplicate")).isZero();
        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(30 - 5 + 1);
      }
    }
  }
}
