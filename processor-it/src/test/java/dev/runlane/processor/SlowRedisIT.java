package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A Redis that answers, but only just inside REDIS_TIMEOUT_MS (a loop of {@code CLIENT PAUSE}),
 * under a backlog on one stream thread with twelve tasks, in small batches (many round trips per
 * drain): slow answers count as none, the transaction's Redis time is bounded, so no transaction
 * aborts, the backlog drains, and nothing is lost or applied twice (D42).
 */
@RealInfra
class SlowRedisIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private static final int RUNS = 2_000;
  private static final int EVENTS_PER_RUN = 9;
  private static final int RESENT = 2_000;

  @Test
  void aCrawlingRedisNeitherAbortsTransactionsNorLosesOrDoublesEvents(Infra infra)
      throws Exception {
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned();
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), redis.uri(), infra.uniqueName("slow-redis"), 32);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.with("REDIS_TIMEOUT_MS", "1000")
          .with("TOPIC_PARTITIONS", "12")
          .with("PROCESSOR_THREADS", "1")
          .start();
      AtomicBoolean pausing = new AtomicBoolean(true);
      AtomicInteger pauses = new AtomicInteger();
      Thread pauser = new Thread(() -> pauseInALoop(redis, pausing, pauses), "redis-pauser");
      pauser.start();
      try {
        await().atMost(Duration.ofSeconds(10)).until(() -> pauses.get() > 0);
        int sent = 0;
        for (int e = 0; e < EVENTS_PER_RUN; e++) {
          for (int r = 0; r < RUNS; r++) {
            h.sendAsync("run-" + r, id(r, e), T0.plusSeconds(e), "");
            sent++;
          }
        }
        for (int i = 0; i < RESENT; i++) { // Sume's retries of events already sent
          int r = i % RUNS;
          h.sendAsync(
              "run-" + r, id(r, i % EVENTS_PER_RUN), T0.plusSeconds(i % EVENTS_PER_RUN), "");
          sent++;
        }
        h.flush();
        assertThat(sent).isEqualTo(20_000);
        int total = sent;
        long start = System.nanoTime();

        await()
            .atMost(Duration.ofSeconds(180))
            .pollInterval(Duration.ofMillis(500))
            .until(() -> h.decided() >= total);
        System.out.printf(
            "slow redis: %d records decided in %.1f s; degraded %.0f, budget spent %.0f,"
                + " aborted %.0f%n",
            total,
            (System.nanoTime() - start) / 1e9,
            h.counter(ProcessorMetrics.DEGRADED),
            h.counter(ProcessorMetrics.REDIS_BUDGET_SPENT),
            h.counter(TransactionAwareClients.ABORTED));
      } finally {
        pausing.set(false);
        pauser.join(5_000);
      }
      await().atMost(Duration.ofSeconds(60)).until(events::caughtUp);

      List<String> applied = events.requestIds();
      Set<String> distinct = new HashSet<>(applied);
      assertThat(distinct).as("every event applied, none twice").hasSize(RUNS * EVENTS_PER_RUN);
      assertThat(applied).hasSize(RUNS * EVENTS_PER_RUN);
      Map<String, RunState> last = new HashMap<>();
      try (ProcessorHarness.Reader runs = h.new Reader(h.topics.runs())) {
        await().atMost(Duration.ofSeconds(60)).until(runs::caughtUp);
        for (ConsumerRecord<String, byte[]> r : runs.records) {
          last.put(r.key(), RunStateJson.fromJson(r.value()));
        }
      }
      assertThat(last).hasSize(RUNS);
      assertThat(last.values())
          .allSatisfy(s -> assertThat(s.lastRequestId()).endsWith("-e" + (EVENTS_PER_RUN - 1)));
      var latency = h.registry.find("runlane.processor.redis.latency").tag("op", "claim").timer();
      assertThat(latency.max(java.util.concurrent.TimeUnit.MILLISECONDS))
          .as("a claim waited out a pause")
          .isGreaterThan(250);
      assertThat(h.counter(ProcessorMetrics.DEGRADED))
          .as("slow answers were taken for none")
          .isPositive();
      assertThat(h.counter(TransactionAwareClients.ABORTED)).as("no transaction aborted").isZero();
    }
  }

  /** Pauses every client for 900 ms of each 950: each command waits up to that, then runs. */
  private static void pauseInALoop(EmbeddedRedis redis, AtomicBoolean pausing, AtomicInteger n) {
    try (Jedis client = new Jedis(redis.uri())) {
      while (pausing.get()) {
        client.clientPause(900);
        n.incrementAndGet();
        LockSupport.parkNanos(Duration.ofMillis(950).toNanos()); // the load's shape, not a wait
      }
    }
  }

  private static String id(int run, int event) {
    return "r" + run + "-e" + event;
  }

  private static double decided(ProcessorHarness h) {
    return h.registry.find(ProcessorMetrics.EVENTS).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }
}
