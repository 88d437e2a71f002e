package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.EmbeddedRedisCluster;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The dedup layer on a real 3-primary Redis Cluster (issue 41, D82, D83): copies are caught by
 * Redis whichever primary holds their key; a primary that dies makes only the events whose keys it
 * held decide on the run store, counted against that node; and a primary killed under load, its
 * replica promoted, loses nothing and applies nothing twice.
 */
@RealInfra
class RedisClusterIT {
  private static final Instant T0 = Instant.parse("2026-12-07T11:00:00Z");
  private static final String FALLBACKS = "runlane.processor.redis.node.fallbacks";

  @Test
  void aStoppedPrimarySendsOnlyItsKeysToTheRunStore(Infra infra) {
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, false);
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), cluster.uri(), infra.uniqueName("cluster-stop"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.start();
      int runs = 90;
      sendWave(h, runs, 0);
      awaitDecided(h, runs);
      sendWave(h, runs, 0); // copies, each caught by the primary holding its key
      awaitDecided(h, 2 * runs);
      assertThat(h.count("duplicate", "redis")).as("every copy caught by Redis").isEqualTo(runs);
      for (EmbeddedRedis primary : cluster.primaries()) {
        assertThat(EmbeddedRedisCluster.keys(primary)).as("keys on every primary").isPositive();
      }

      EmbeddedRedis dead = cluster.primaries().get(2);
      dead.kill();
      sendWave(h, runs, 1);
      sendWave(h, runs, 1); // copies
      awaitDecided(h, 4 * runs);

      int onDead = 0;
      for (int r = 0; r < runs; r++) {
        if (cluster.primaryIndexOf(h.keyPrefix + id(r, 1)) == 2) {
          onDead++;
        }
      }
      System.out.printf(
          "cluster, primary stopped: %d of %d ids on it; fallbacks %s; duplicates redis %.0f"
              + " store %.0f%n",
          onDead, runs, fallbacks(h), h.count("duplicate", "redis"), h.count("duplicate", "store"));
      assertThat(onDead).as("the test's ids reach the stopped primary").isPositive();
      assertThat(h.counter(ProcessorMetrics.DEGRADED))
          .as("each of its events and copies decided on the run store, nothing else")
          .isEqualTo(2.0 * onDead);
      assertThat(fallbacks(h))
          .as("only the stopped primary's claims fell back, counted against it")
          .containsOnlyKeys(node(dead));
      assertThat(fallbacks(h).get(node(dead))).isGreaterThanOrEqualTo(2.0 * onDead);
      assertThat(h.count("duplicate", "redis"))
          .as("copies on the live primaries still caught by Redis")
          .isEqualTo(runs + (runs - onDead));
      assertThat(h.count("duplicate", "store")).isEqualTo(onDead);
      assertAppliedOnceInOrder(h, events, runs, 2);
    }
  }

  @Test
  void aPrimaryKilledUnderLoadLosesNothingAndAppliesNothingTwice(Infra infra) {
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, true);
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), cluster.uri(), infra.uniqueName("cluster-kill"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.start();
      int runs = 300;
      int waves = 6;
      for (int e = 0; e < waves; e++) {
        sendWave(h, runs, e);
        if (e > 0) {
          sendWave(h, runs, e - 1); // Sume's retry of the previous event
        }
        if (e == 2) {
          cluster.primaries().get(1).kill(); // the waves before are still being decided
        }
      }
      cluster.awaitPromoted(1);
      sendWave(h, runs, waves - 1); // copies of the last wave, after the failover
      int records = runs * (2 * waves);
      awaitDecided(h, records);
      double copies = runs * waves;
      System.out.printf(
          "cluster, primary killed: %d records; fallbacks %s; duplicates redis %.0f store %.0f,"
              + " stale %.0f%n",
          records,
          fallbacks(h),
          h.count("duplicate", "redis"),
          h.count("duplicate", "store"),
          h.count("stale", "store"));
      assertThat(h.count("duplicate", "redis") + h.count("duplicate", "store"))
          .as("every copy caught, by one layer or the other")
          .isEqualTo(copies);
      assertThat(fallbacks(h)).containsOnlyKeys(node(cluster.primaries().get(1)));
      assertAppliedOnceInOrder(h, events, runs, waves);
    }
  }

  private static void sendWave(ProcessorHarness h, int runs, int event) {
    for (int r = 0; r < runs; r++) {
      h.sendAsync("run-" + r, id(r, event), T0.plusSeconds(event), "");
    }
    h.flush();
  }

  private static void awaitDecided(ProcessorHarness h, int records) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> h.decided() >= records);
  }

  /** Every event applied once, and each run's last applied event its newest. */
  private static void assertAppliedOnceInOrder(
      ProcessorHarness h, ProcessorHarness.Reader events, int runs, int perRun) {
    await().atMost(Duration.ofSeconds(60)).until(events::caughtUp);
    List<String> applied = events.requestIds();
    assertThat(new HashSet<>(applied)).as("none lost").hasSize(runs * perRun);
    assertThat(applied).as("none applied twice").hasSize(runs * perRun);
    Map<String, RunState> last = new HashMap<>();
    try (ProcessorHarness.Reader states = h.new Reader(h.topics.runs())) {
      await().atMost(Duration.ofSeconds(60)).until(states::caughtUp);
      for (ConsumerRecord<String, byte[]> r : states.records) {
        last.put(r.key(), RunStateJson.fromJson(r.value()));
      }
    }
    Set<String> regressed = new HashSet<>();
    last.forEach(
        (run, state) -> {
          if (!state.lastRequestId().endsWith("-e" + (perRun - 1))) {
            regressed.add(run);
          }
        });
    assertThat(regressed).as("no order regression").isEmpty();
  }

  private static Map<String, Double> fallbacks(ProcessorHarness h) {
    Map<String, Double> byNode = new HashMap<>();
    for (Counter c : h.registry.find(FALLBACKS).counters()) {
      if (c.count() > 0) {
        byNode.put(c.getId().getTag("node"), c.count());
      }
    }
    return byNode;
  }

  private static String node(EmbeddedRedis redis) {
    return redis.host() + ":" + redis.port();
  }

  private static String id(int run, int event) {
    return "c" + run + "-e" + event;
  }
}
