package dev.runlane.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.embedded.EmbeddedRedis;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The seeds' exercise through the whole pipeline, down to the database: one event delivered five
 * times at once and three more times after a Redis restart that lost every key, through the
 * ingress, the processor and the sink, is one row; each layer counts the copies it caught.
 */
class SinkSeedsIT {
  private static final byte[] BODY =
      SumeEvents.event("run-seed", "req-seed", Instant.parse("2026-11-29T10:00:00Z"))
          .type("run.completed")
          .data("ok", true)
          .bytes();

  @Test
  void fiveConcurrentAndThreeSequentialAcrossARedisRestartAreOneRow() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned();
        Stack stack =
            Stack.start(Stack.Settings.freePorts(Stack.newSecret()).withRedis(redis.uri()))) {
      ExecutorService pool = Executors.newFixedThreadPool(5);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> sends = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        sends.add(
            pool.submit(
                () -> {
                  go.await();
                  return deliver(http, stack);
                }));
      }
      go.countDown();
      for (Future<Integer> f : sends) {
        assertThat(f.get()).isEqualTo(200);
      }
      pool.shutdown();
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(stack) == 5);

      redis.restart(); // no persistence: every dedup key is gone
      for (int i = 1; i <= 3; i++) {
        assertThat(deliver(http, stack)).isEqualTo(200);
        int expected = 5 + i;
        await().atMost(Duration.ofSeconds(30)).until(() -> decided(stack) == expected);
      }

      var sink = stack.sinkTarget();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> count(sink.jdbcUrl(), sink.user(), "SELECT count(*) FROM runs") == 1);
      assertThat(count(sink.jdbcUrl(), sink.user(), "SELECT count(*) FROM processed_events"))
          .isEqualTo(1);
      assertThat(
              count(
                  sink.jdbcUrl(),
                  sink.user(),
                  "SELECT applied_count FROM runs WHERE run_id = 'run-seed'"
                      + " AND last_request_id = 'req-seed'"))
          .isEqualTo(1);
      assertThat(processor(stack, "applied", "store")).isEqualTo(1);
      assertThat(processor(stack, "duplicate", "redis") + processor(stack, "duplicate", "store"))
          .isEqualTo(7);
      assertThat(processor(stack, "duplicate", "redis"))
          .as("concurrent copies caught by the Redis claim")
          .isGreaterThanOrEqualTo(4);
      assertThat(processor(stack, "duplicate", "store"))
          .as("the first copy after Redis lost its keys, caught by the run store")
          .isGreaterThanOrEqualTo(1);
      // Kafka's exactly-once reached the sink: nothing was left for the constraint to absorb.
      String metrics =
          http.send(
                  HttpRequest.newBuilder(sink.adminUri().resolve("/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(metrics)
          .contains("runlane_sink_events_total{outcome=\"written\",service=\"sink\"} 1.0")
          .contains("runlane_sink_events_total{outcome=\"duplicate\",service=\"sink\"} 0.0");
    }
  }

  private static int deliver(HttpClient http, Stack stack) throws Exception {
    byte[] raw = BODY;
    long ts = System.currentTimeMillis() / 1000;
    HttpRequest request =
        HttpRequest.newBuilder(stack.webhookUri())
            .header("Content-Type", "application/json")
            .header(SumeSignatureVerifier.EVENT_ID_HEADER, "evt_" + UUID.randomUUID())
            .header(SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(ts))
            .header(
                SumeSignatureVerifier.SIGNATURE_HEADER,
                SumeSignatureVerifier.sign(stack.secret(), ts, raw))
            .POST(HttpRequest.BodyPublishers.ofByteArray(raw))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static double decided(Stack stack) {
    return processor(stack, "applied", "store")
        + processor(stack, "duplicate", "redis")
        + processor(stack, "duplicate", "store");
  }

  private static double processor(Stack stack, String outcome, String layer) {
    PrometheusMeterRegistry registry = stack.processorRegistry();
    var c =
        registry
            .find("runlane.processor.events")
            .tags("outcome", outcome, "layer", layer)
            .counter();
    return c == null ? 0 : c.count();
  }

  private static long count(String url, String user, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, user, null);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }
}
