package dev.runlane.sink;

import static dev.runlane.sink.SinkHarness.T0;
import static dev.runlane.sink.SinkHarness.counter;
import static dev.runlane.sink.SinkHarness.gauge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedPostgres;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Records PostgreSQL refuses for what they hold are set aside, never an outage (D61); the lag gauge
 * returns to 0 (D63). A real outage is still one: {@link SinkOutageIT}.
 */
@RealInfra
class SinkRejectIT {
  private static final int ORDINARY = 1_000;

  /** Each trigger with its SQLSTATE: what reaches the database past an older ingress. */
  private enum Trigger {
    NUL_IN_REQUEST_ID("22"),
    OVERLONG_REQUEST_ID("54000"),
    NUMBER_OUT_OF_RANGE("22003");

    final String sqlState;

    Trigger(String sqlState) {
      this.sqlState = sqlState;
    }
  }

  @Test
  void refusedRecordsAreSetAsideAndEveryOtherRowLands(Infra infra) throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start();
        SinkHarness h = new SinkHarness(infra, pg, "reject", 3)) {
      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = h.startSink(registry)) {
        int round = 0;
        for (Trigger trigger : Trigger.values()) {
          sendBad(h, trigger, round);
          sendOrdinary(h, round);
          round++;
          h.awaitCaughtUp(Duration.ofSeconds(60));
        }
        assertThat(h.count("SELECT count(*) FROM processed_events"))
            .as("every ordinary event has its row, none of the refused")
            .isEqualTo(3L * ORDINARY);
        for (Trigger trigger : Trigger.values()) {
          assertRejected(h, trigger);
        }
        assertThat(h.count("SELECT count(*) FROM sink_rejected")).isEqualTo(3);
        for (int r = 0; r < 3; r++) {
          assertThat(
                  h.count(
                      "SELECT count(*) FROM runs WHERE run_id = 'mixed-"
                          + r
                          + "' AND applied_count = 10 AND last_request_id = 'mixed-"
                          + r
                          + "-e9'"))
              .as("the refused event, newer than the run's others, did not move its row")
              .isEqualTo(1);
        }
        assertThat(counter(registry, SinkMetrics.EVENTS, "rejected")).isEqualTo(3);
        assertThat(counter(registry, SinkMetrics.EVENTS, "written")).isEqualTo(3.0 * ORDINARY);
        assertThat(registry.find(SinkMetrics.DATABASE_FAILURES).counter().count())
            .as("no refused row was taken for an outage")
            .isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, SinkMetrics.LAG) == 0);
        assertThat(sink.ready()).isTrue();
      }
    }
  }

  private static void assertRejected(SinkHarness h, Trigger trigger) throws Exception {
    try (Connection c = h.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT sqlstate, reason, run_id, length(record_value) FROM sink_rejected"
                    + " WHERE run_id = 'mixed-"
                    + trigger.ordinal()
                    + "'")) {
      assertThat(rs.next()).as("%s set aside", trigger).isTrue();
      assertThat(rs.getString(1)).as("%s's SQLSTATE", trigger).startsWith(trigger.sqlState);
      assertThat(rs.getString(2)).as("%s's reason", trigger).isNotBlank();
      assertThat(rs.getInt(4)).as("the raw record kept").isPositive();
      assertThat(rs.next()).isFalse();
    }
  }

  /** The refused event: run mixed-N, newer than its run's ordinary events. */
  private static void sendBad(SinkHarness h, Trigger trigger, int round) {
    String run = "mixed-" + round;
    Instant newest = T0.plusSeconds(60);
    String requestId =
        switch (trigger) {
          case NUL_IN_REQUEST_ID -> "nul\\u0000-" + round;
          // Incompressible, so that no TOAST compression brings it under the btree limit.
          case OVERLONG_REQUEST_ID -> randomId(8_000);
          case NUMBER_OUT_OF_RANGE -> "big-" + round;
        };
    String data =
        trigger == Trigger.NUMBER_OUT_OF_RANGE
            ? "{\"run_id\":\"" + run + "\",\"n\":1e200000}"
            : "{\"run_id\":\"" + run + "\"}";
    h.sendRaw(
        run,
        requestId.replace("\\u0000", "\u0000"),
        "{\"request_id\":\""
            + requestId
            + "\",\"created_at\":\""
            + newest
            + "\",\"type\":\"run.progress\",\"data\":"
            + data
            + "}");
  }

  /** 990 events of single runs, and 10 of run mixed-N around the refused one. */
  private static void sendOrdinary(SinkHarness h, int round) {
    for (int e = 0; e < 10; e++) {
      h.send("mixed-" + round, "mixed-" + round + "-e" + e, T0.plusMillis(e), null);
    }
    for (int i = 0; i < ORDINARY - 10; i++) {
      String run = "r" + round + "-" + i;
      h.send(run, run + "-e0", T0, null);
    }
    h.flush();
  }

  private static String randomId(int length) {
    Random random = new Random(length);
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) ('a' + random.nextInt(26)));
    }
    return sb.toString();
  }
}
