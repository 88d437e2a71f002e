package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Without Redis, a copy is still a duplicate (issue 37, D68). Under Sume-like traffic (copies of
 * events sent again, events of a run sent out of order), Redis is frozen (SIGSTOP) until everything
 * sent meanwhile is decided, then answers again: no request_id is both applied and listed stale,
 * every event is applied once or listed stale, and the copies decided without Redis are duplicates
 * caught by the run store's record of decided ids.
 */
@RealInfra
class RedisFrozenIT {
  private static final Instant T0 = Instant.parse("2026-12-07T10:00:00Z");
  private static final int RUNS = 200;

  private final Random random = new Random(37);
  private final Set<String> sent = new HashSet<>();
  private int records;

  @Test
  void copiesDecidedWhileRedisIsFrozenAreDuplicatesNeverListedStale(Infra infra) throws Exception {
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned();
        ProcessorHarness h = ProcessorHarness.unique(infra, redis, "frozen-redis");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale())) {
      h.start(); // REDIS_TIMEOUT_MS 500
      send(h, 0, 3); // Redis answers
      awaitDecided(h);
      double degradedBefore = h.counter(ProcessorMetrics.DEGRADED);

      // Frozen until every record sent meanwhile is decided: decided without Redis, whatever
      // the machine's load makes that take.
      redis.freeze();
      long frozenAt = System.nanoTime();
      send(h, 3, 6);
      resend(h, 0, 3); // copies of applied events, older than their run's head now
      awaitDecided(h);
      long decidedAfterMs = (System.nanoTime() - frozenAt) / 1_000_000;
      double degraded = h.counter(ProcessorMetrics.DEGRADED) - degradedBefore;
      redis.thaw();
      resend(h, 0, 6); // Redis answers again
      awaitDecided(h);
      await().atMost(Duration.ofSeconds(60)).until(() -> events.caughtUp() && stale.caughtUp());

      List<String> applied = events.requestIds();
      Set<String> listed = new HashSet<>(stale.requestIds());
      System.out.printf(
          "redis frozen: %,d records, %,d request_ids; decided while frozen in %,d ms,"
              + " %,.0f degraded; applied %,d, stale %,d, duplicates redis %,.0f store %,.0f%n",
          records,
          sent.size(),
          decidedAfterMs,
          degraded,
          applied.size(),
          listed.size(),
          h.count("duplicate", "redis"),
          h.count("duplicate", "store"));
      assertThat(degraded).as("decisions made without Redis").isPositive();
      assertThat(applied).as("applied once each").doesNotHaveDuplicates();
      assertThat(listed)
          .as("request_ids both applied and listed stale")
          .doesNotContainAnyElementsOf(applied);
      Set<String> accounted = new HashSet<>(applied);
      accounted.addAll(listed);
      assertThat(accounted).as("every event applied or listed stale").isEqualTo(sent);
      assertThat(h.count("duplicate", "store"))
          .as("the copies of applied events decided without Redis")
          .isGreaterThanOrEqualTo(2 * RUNS);
      // The record's size is visible: Streams' RocksDB property metrics name its store (D68).
      double recorded =
          h.app.streams().metrics().entrySet().stream()
              .filter(e -> e.getKey().name().equals("estimate-num-keys"))
              .filter(e -> "decided-ids".equals(e.getKey().tags().get("rocksdb-window-state-id")))
              .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
              .sum();
      assertThat(recorded)
          .as("entries of decided-ids, by its metrics")
          .isGreaterThanOrEqualTo(sent.size());
    }
  }

  /**
   * Sends events [from, to) of every run: in order for four runs of five, two of them swapped for
   * the fifth (the older one then comes late), and three in ten sent twice (Sume's retries).
   */
  private void send(ProcessorHarness h, int from, int to) {
    for (int run = 0; run < RUNS; run++) {
      List<Integer> order = new ArrayList<>();
      for (int e = from; e < to; e++) {
        order.add(e);
      }
      if (run % 5 == 0) {
        Collections.swap(order, 0, 1);
      }
      for (int e : order) {
        sendOne(h, run, e);
        if (random.nextInt(10) < 3) {
          sendOne(h, run, e);
        }
      }
    }
    h.flush();
  }

  /** Sends events [from, to) of every run once more. */
  private void resend(ProcessorHarness h, int from, int to) {
    for (int run = 0; run < RUNS; run++) {
      for (int e = from; e < to; e++) {
        sendOne(h, run, e);
      }
    }
    h.flush();
  }

  private void sendOne(ProcessorHarness h, int run, int event) {
    String id = "r" + run + "-e" + event;
    h.sendAsync("run-" + run, id, T0.plusSeconds(event), "");
    sent.add(id);
    records++;
  }

  private void awaitDecided(ProcessorHarness h) {
    await().atMost(Duration.ofSeconds(60)).until(() -> h.decided() >= records);
  }
}
