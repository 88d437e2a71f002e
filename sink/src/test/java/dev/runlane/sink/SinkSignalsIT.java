package dev.runlane.sink;

import static dev.runlane.sink.SinkHarness.T0;
import static dev.runlane.sink.SinkHarness.gauge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.sink.db.AcceptedGaps;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** What the sink tells an operator when it cannot do its work (D63). */
@RealInfra
class SinkSignalsIT {

  @Test
  void readinessFollowsTheBrokerAfterStart(Infra shared) throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        SinkHarness h =
            new SinkHarness(
                SinkHarness.onBroker(shared, kafka.bootstrapServers()),
                shared.postgres(),
                "broker",
                2)) {
      try (SinkApp sink = h.startSink(SinkHarness.registry())) {
        kafka.stop();
        await().atMost(Duration.ofSeconds(20)).until(() -> !sink.ready());
        kafka.restart();
        await().atMost(Duration.ofSeconds(60)).until(sink::ready);
        h.send("run-b", "run-b-e0", T0, null);
        h.flush();
        h.awaitCaughtUp(Duration.ofSeconds(30));
      }
    }
  }

  @Test
  void aRetentionGapIsRefusedUntilAnOperatorAcceptsIt(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "gap", 1)) {
      send(h, 0, 100);
      storeAll(h);
      send(h, 100, 200);
      TopicPartition tp = new TopicPartition(h.topic, 0);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, h.bootstrap))) {
        // What retention does: the log start moves past records the sink never stored.
        admin
            .deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(150)))
            .all()
            .get(30, TimeUnit.SECONDS);
      }

      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = h.start(registry)) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> gauge(registry, SinkMetrics.RETENTION_GAP) == 50);
        assertThat(sink.ready()).as("not ready at a gap").isFalse();
        assertThat(h.storedOffsets()).isEqualTo(Map.of(0, 100L));
        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(100);
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> gauge(registry, SinkMetrics.LAG) == 100); // the records not stored
        assertThat(sink.ready()).isFalse();

        acceptGap(h, 100, 150);
        await().atMost(Duration.ofSeconds(30)).until(sink::ready);
        h.awaitCaughtUp(Duration.ofSeconds(30));
        assertThat(gauge(registry, SinkMetrics.RETENTION_GAP)).isZero();
      }
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(150);
      assertThat(
              h.count("SELECT count(*) FROM sink_gaps WHERE from_offset = 100 AND to_offset = 150"))
          .isEqualTo(1);
    }
  }

  @Test
  void aStoredOffsetPastTheLogEndWaitsForAnOperator(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "ahead", 1)) {
      send(h, 0, 10);
      storeAll(h);
      // As if the topic had been deleted and made again: the stored offset is past its end.
      storeOffset(h, 300);
      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = h.start(registry)) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> gauge(registry, SinkMetrics.OFFSETS_AHEAD) == 1);
        send(h, 10, 15);
        assertThat(sink.ready()).as("not ready past the log end").isFalse();
        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(10);

        acceptGap(h, 300, 10);
        await().atMost(Duration.ofSeconds(30)).until(sink::ready);
        h.awaitCaughtUp(Duration.ofSeconds(30));
        assertThat(gauge(registry, SinkMetrics.OFFSETS_AHEAD)).isZero();
      }
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(15);
    }
  }

  @Test
  void aSinkWhoseLoopDiesExitsSoItsSupervisorRestartsIt(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "dies", 1)) {
      send(h, 0, 10);
      storeAll(h);
      // A stored offset no seek takes, as a hand edit could leave it: the loop cannot go on.
      storeOffset(h, -5);
      SinkHarness.ChildSink child = h.startChild("dies", Map.of());
      try {
        assertThat(child.process().waitFor(60, TimeUnit.SECONDS))
            .as("the sink JVM exited (log %s)", child.log())
            .isTrue();
        assertThat(child.process().exitValue()).isEqualTo(1);
        assertThat(Files.readString(child.log())).contains("no offset is negative");
      } finally {
        child.process().destroyForcibly().waitFor();
      }
    }
  }

  /** Runs a sink until it stored all the topic holds, then stops it. */
  private static void storeAll(SinkHarness h) throws Exception {
    SinkApp sink = h.startSink(SinkHarness.registry());
    try (sink) {
      h.awaitCaughtUp(Duration.ofSeconds(30));
    }
  }

  /** What an operator's accept-gap does: gives up offsets {@code from} to {@code to} of p0. */
  private static void acceptGap(SinkHarness h, long from, long to) throws SQLException {
    try (Connection c = h.connect()) {
      c.setAutoCommit(false);
      assertThat(new AcceptedGaps(h.group).accept(c, h.topic, 0, from, to)).isTrue();
      c.commit();
    }
  }

  /** Sets the stored offset by hand, as an operator's edit could. */
  private static void storeOffset(SinkHarness h, long next) throws SQLException {
    try (Connection c = h.connect();
        Statement s = c.createStatement()) {
      s.executeUpdate("UPDATE sink_offsets SET next_offset = " + next);
    }
  }

  private static void send(SinkHarness h, int from, int to) {
    for (int e = from; e < to; e++) {
      h.send("run-g", "run-g-e" + e, T0.plusMillis(e), null);
    }
    h.flush();
  }
}
