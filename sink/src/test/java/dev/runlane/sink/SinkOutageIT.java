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
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The database goes away under a running sink and comes back on the same data and port; the lag
 * gauge says what waits meanwhile, from the offsets stored in the database (D63).
 */
@RealInfra
class SinkOutageIT {

  @Test
  void theSinkWaitsOutADatabaseOutageAndLosesNothing(Infra infra) throws Exception {
    int runs = 50;
    try (EmbeddedPostgres pg = EmbeddedPostgres.start();
        SinkHarness h = new SinkHarness(infra, pg, "outage", 6)) {
      PrometheusMeterRegistry registry = SinkHarness.registry();
      try (SinkApp sink = h.startSink(registry)) {
        send(h, runs, 0, 10);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> h.countOrMinusOne("SELECT count(*) FROM processed_events") > 0);

        h.awaitCaughtUp(Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, SinkMetrics.LAG) == 0);

        pg.stop();
        send(h, runs, 10, 20); // arrives while the database is away
        await().atMost(Duration.ofSeconds(20)).until(() -> !sink.ready());
        assertThat(sink.databaseUp()).isFalse();
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () ->
                    assertThat(gauge(registry, SinkMetrics.LAG))
                        .as("records in the topic not yet in the database")
                        .isEqualTo(runs * 10.0));

        pg.restart();
        await().atMost(Duration.ofSeconds(30)).until(sink::ready);
        h.awaitCaughtUp(Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry, SinkMetrics.LAG) == 0);
      }
      assertThat(h.count("SELECT count(*) FROM processed_events")).isEqualTo(runs * 20L);
      assertThat(h.count("SELECT count(DISTINCT request_id) FROM processed_events"))
          .isEqualTo(runs * 20L);
      assertThat(h.count("SELECT count(*) FROM runs WHERE applied_count = 20")).isEqualTo(runs);
      assertThat(counter(registry, SinkMetrics.EVENTS, "written")).isEqualTo(runs * 20.0);
      assertThat(registry.find(SinkMetrics.DATABASE_FAILURES).counter().count()).isPositive();
    }
  }

  private static void send(SinkHarness h, int runs, int from, int to) {
    for (int e = from; e < to; e++) {
      for (int r = 0; r < runs; r++) {
        h.send("run-" + r, "run-" + r + "-e" + e, T0.plusMillis(e), null);
      }
    }
    h.flush();
  }
}
