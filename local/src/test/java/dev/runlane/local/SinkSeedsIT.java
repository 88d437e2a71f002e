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
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The seeds' exercise through the whole pipeline, down to the database: one event delivered five
 * times at once and three more times after a Redis restart that lost every key, through the
 * ingress, the processor and the sink, is one row; each layer counts the copies it caught. On one
 * Redis node, and on the 3-primary Redis Cluster that {@code runlane up --redis-cluster} starts
 * (D82), there with two seeds whose keys live on different primaries.
 */
class SinkSeedsIT {
  private static final Instant CREATED_AT = Instant.parse("2026-11-29T10:00:00Z");

  /** Where the dedup keys live. */
  enum Topology {
    ONE_NODE,
    CLUSTER
  }

  /** One event and its copies: a run and the request id Sume gives it. */
  private record Seed(String runId, String requestId) {
    byte[] body() {
      return SumeEvents.event(runId, requestId, CREATED_AT)
          .type("run.completed")
          .data("ok", true)
          .bytes();
    }
  }

  @ParameterizedTest
  @EnumSource(Topology.class)
  void fiveConcurrentAndThreeSequentialAcrossARedisRestartAreOneRow(Topology topology)
      throws Exception {
    // Which layer catches a copy is what this test asserts, so a Redis answer slowed past the
    // default 250 ms by a busy build machine must not send the copies to the run store (D42).
    Stack.Settings settings =
        Stack.Settings.freePorts(Stack.newSecret())
            .withProcessorEnv(Map.of("REDIS_TIMEOUT_MS", "3000", "REDIS_SLOW_MS", "2000"));
    try (EmbeddedRedis redis = topology == Topology.ONE_NODE ? EmbeddedRedis.startOwned() : null;
        Stack stack =
            Stack.start(
                redis != null ? settings.withRedis(redis.uri()) : settings.withRedisCluster())) {
      List<Seed> seeds =
          redis != null ? List.of(new Seed("run-seed", "req-seed")) : seedsOnTwoPrimaries(stack);
      int n = seeds.size();
      HttpClient http = HttpClient.newHttpClient();
      ExecutorService pool = Executors.newFixedThreadPool(5 * n);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> sends = new ArrayList<>();
      for (Seed seed : seeds) {
        for (int i = 0; i < 5; i++) {
          sends.add(
              pool.submit(
                  () -> {
                    go.await();
                    return deliver(http, stack, seed);
                  }));
        }
      }
      go.countDown();
      for (Future<Integer> f : sends) {
        assertThat(f.get()).isEqualTo(200);
      }
      pool.shutdown();
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(stack) == 5 * n);
      if (redis == null) {
        long primariesWithKeys =
            stack.redisCluster().primaries().stream().filter(p -> p.keyCount() > 0).count();
        assertThat(primariesWithKeys).as("markers on more than one primary").isGreaterThan(1);
      }

      // No persistence: every dedup key is gone.
      if (redis != null) {
        redis.restart();
      } else {
        stack.redisCluster().restart();
      }
      for (int i = 1; i <= 3; i++) {
        for (Seed seed : seeds) {
          assertThat(deliver(http, stack, seed)).isEqualTo(200);
        }
        int expected = 5 * n + i * n;
        await().atMost(Duration.ofSeconds(30)).until(() -> decided(stack) == expected);
      }

      var sink = stack.sinkTarget();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> count(sink.jdbcUrl(), sink.user(), "SELECT count(*) FROM runs") == n);
      assertThat(count(sink.jdbcUrl(), sink.user(), "SELECT count(*) FROM processed_events"))
          .isEqualTo(n);
      for (Seed seed : seeds) {
        assertThat(
                count(
                    sink.jdbcUrl(),
                    sink.user(),
                    "SELECT applied_count FROM runs WHERE run_id = '"
                        + seed.runId()
                        + "' AND last_request_id = '"
                        + seed.requestId()
                        + "'"))
            .isEqualTo(1);
      }
      assertThat(processor(stack, "applied", "store")).isEqualTo(n);
      assertThat(processor(stack, "duplicate", "redis") + processor(stack, "duplicate", "store"))
          .isEqualTo(7 * n);
      assertThat(processor(stack, "duplicate", "redis"))
          .as("concurrent copies caught by the Redis claim")
          .isGreaterThanOrEqualTo(4 * n);
      assertThat(processor(stack, "duplicate", "store"))
          .as("the first copy after Redis lost its keys, caught by the run store")
          .isGreaterThanOrEqualTo(n);
      // Kafka's exactly-once reached the sink: nothing was left for the constraint to absorb.
      String metrics =
          http.send(
                  HttpRequest.newBuilder(sink.adminUri().resolve("/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(metrics)
          .contains("runlane_sink_events_total{outcome=\"written\",service=\"sink\"} " + n + ".0")
          .contains("runlane_sink_events_total{outcome=\"duplicate\",service=\"sink\"} 0.0");
    }
  }

  /** Two seeds whose dedup keys live on primaries 0 and 1 of the stack's cluster. */
  private static List<Seed> seedsOnTwoPrimaries(Stack stack) {
    List<Seed> seeds = new ArrayList<>();
    for (int i = 0; seeds.size() < 2; i++) {
      String requestId = "req-seed-" + i;
      if (stack.redisCluster().primaryIndexOf(stack.dedupKeyPrefix() + requestId) == seeds.size()) {
        seeds.add(new Seed("run-seed-" + seeds.size(), requestId));
      }
    }
    return seeds;
  }

  private static int deliver(HttpClient http, Stack stack, Seed seed) throws Exception {
    byte[] raw = seed.body();
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
