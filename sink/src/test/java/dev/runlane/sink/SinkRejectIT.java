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
import java.util.Map;
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

  @Test
  void aBatchWithSeveralRefusedRecordsAndACopyStoresEveryOtherRow(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "batch", 1)) {
      // Everything in the topic before the sink starts: its first polls take them together.
      for (int i = 0; i < 1_500; i++) {
        if (i == 100) {
          sendBad(h, Trigger.NUL_IN_REQUEST_ID, 0);
        } else if (i == 700) {
          sendBad(h, Trigger.NUL_IN_REQUEST_ID, 0); // a copy of the refused record, same batch
          sendBad(h, Trigger.OVERLONG_REQUEST_ID, 1);
        } else if (i == 701) {
          sendBad(h, Trigger.NUMBER_OUT_OF_RANGE, 2);
          h.sendRaw("run-x", "not-json-1", "not json at all");
        }
        h.send("b-" + i, "b-" + i + "-e0", T0, null);
      }
      h.flush();
      PrometheusMeterRegistry registry = SinkHarness.registry();
      SinkApp sink = h.startSink(registry);
      try (sink) {
        h.awaitCaughtUp(Duration.ofSeconds(60));
      }
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(1_500);
      assertThat(h.count("SELECT count(*) FROM sink_rejected")).isEqualTo(5);
      assertThat(h.count("SELECT count(*) FROM sink_rejected WHERE reason LIKE 'a copy of %'"))
          .isEqualTo(1);
      assertThat(
              h.count(
                  "SELECT count(*) FROM sink_rejected WHERE sqlstate IS NULL"
                      + " AND request_id = 'not-json-1' AND reason LIKE 'no event: %'"))
          .as("the record that is no event, set aside with no SQLSTATE")
          .isEqualTo(1);
      assertThat(counter(registry, SinkMetrics.EVENTS, "written")).isEqualTo(1_500);
      assertThat(counter(registry, SinkMetrics.EVENTS, "rejected")).isEqualTo(5);
      assertThat(counter(registry, SinkMetrics.EVENTS, "duplicate"))
          .as("no copy counted as absorbed by the constraint")
          .isZero();
      assertThat(registry.find(SinkMetrics.DATABASE_FAILURES).counter().count()).isZero();
    }
  }

  @Test
  void aTriggerThatFailsEveryRowIsTheDatabasesFaultNotTheRows(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "systemic", 1)) {
      h.send("s-first", "s-first-e0", T0, null);
      h.flush();
      SinkApp first = h.startSink(SinkHarness.registry()); // makes the tables
      try (first) {
        h.awaitCaughtUp(Duration.ofSeconds(30));
      }
      // An audit trigger with a bug: every insert fails NOT NULL (23502) on its own table.
      h.execute(
          "CREATE TABLE audit (who text NOT NULL, rid text)",
          "CREATE FUNCTION audit_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO"
              + " audit VALUES (NULL, NEW.request_id); RETURN NEW; END $$",
          "CREATE TRIGGER audit_t AFTER INSERT ON processed_events FOR EACH ROW EXECUTE"
              + " FUNCTION audit_f()");
      // In the topic before the sink starts: its first poll holds them all, over the threshold.
      for (int i = 0; i < 100; i++) {
        h.send("s-" + i, "s-" + i + "-e0", T0, null);
      }
      h.flush();
      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = SinkApp.start(SinkConfig.fromEnv(h.env()).withPort(0), registry)) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> registry.find(SinkMetrics.DATABASE_FAILURES).counter().count() >= 2);
        assertThat(sink.ready()).isFalse();
        assertThat(h.count("SELECT count(*) FROM sink_rejected")).as("nothing set aside").isZero();
        assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(1);

        h.execute("DROP TRIGGER audit_t ON processed_events");
        h.awaitCaughtUp(Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(30)).until(sink::ready);
      }
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(101);
      assertThat(h.count("SELECT count(*) FROM sink_rejected")).isZero();
    }
  }

  @Test
  void aRecordTheRejectedTableCannotHoldEitherIsSetAsideInAscii(Infra infra) throws Exception {
    try (SinkHarness h = new SinkHarness(infra, infra.postgres(), "latin", 1)) {
      String latin1 = h.database + "_latin1";
      try (Connection c = h.connect("postgres");
          Statement s = c.createStatement()) {
        s.execute(
            "CREATE DATABASE "
                + latin1
                + " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
      }
      for (int i = 0; i < 10; i++) {
        h.send("l-" + i, "l-" + i + "-e0", T0, null);
      }
      h.send("日本", "日本-e0", T0, null); // no LATIN1 character for it, in any column
      h.flush();
      Map<String, String> env = h.env();
      env.put("SINK_DATABASE_URL", h.postgres.jdbcUrl(latin1));
      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = SinkApp.start(SinkConfig.fromEnv(env).withPort(0), registry)) {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> counter(registry, SinkMetrics.EVENTS, "rejected") == 1);
        await().atMost(Duration.ofSeconds(30)).until(sink::ready);
      }
      assertThat(
              h.onlyRow(
                  latin1, "SELECT run_id, sqlstate, record_value IS NOT NULL FROM sink_rejected"))
          .containsExactly("\\u65e5\\u672c", "22P05", true);
      assertThat(counter(registry, SinkMetrics.EVENTS, "written")).isEqualTo(10);
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
