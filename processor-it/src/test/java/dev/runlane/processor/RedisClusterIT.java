package dev.runlane.processor;

import static dev.runlane.processor.RedisWaves.assertAppliedOnceInOrder;
import static dev.runlane.processor.RedisWaves.assertNoStreamThreadDied;
import static dev.runlane.processor.RedisWaves.awaitDecided;
import static dev.runlane.processor.RedisWaves.fallbacks;
import static dev.runlane.processor.RedisWaves.id;
import static dev.runlane.processor.RedisWaves.node;
import static dev.runlane.processor.RedisWaves.send;
import static dev.runlane.processor.RedisWaves.startPatient;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.EmbeddedRedisCluster;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.embedded.TlsStores;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The dedup layer on a real 3-primary Redis Cluster (issue 41, D82): copies are caught by Redis
 * whichever primary holds their key; a primary that dies makes only the events whose keys it held
 * decide on the run store, counted against that node; and a primary killed under load, its replica
 * promoted, loses nothing and applies nothing twice.
 */
@RealInfra
class RedisClusterIT {

  /**
   * Over TLS ({@code rediss+cluster://}, D74): every node speaks TLS on the port it announces, to
   * clients and to the other nodes, so a key reached at all was reached over TLS.
   */
  @Test
  void aStoppedPrimarySendsOnlyItsKeysToTheRunStore(Infra infra) {
    TlsStores tls = TlsStores.shared();
    TlsStores.JvmTrust trust = tls.trustedByThisJvm();
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, false, tls);
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), cluster.uri(), infra.uniqueName("cluster-stop"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      assertThat(cluster.uri().getScheme()).isEqualTo("rediss+cluster");
      startPatient(h);
      int runs = 90;
      send(h, runs, 0);
      awaitDecided(h, runs);
      send(h, runs, 0); // copies, each caught by the primary holding its key
      awaitDecided(h, 2 * runs);
      assertThat(h.count("duplicate", "redis")).as("every copy caught by Redis").isEqualTo(runs);
      for (EmbeddedRedis primary : cluster.primaries()) {
        assertThat(primary.keyCount()).as("keys on every primary").isPositive();
      }

      EmbeddedRedis dead = cluster.primaries().get(2);
      dead.kill();
      send(h, runs, 1);
      send(h, runs, 1); // copies
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
      assertNoStreamThreadDied(h);
    } finally {
      trust.close();
    }
  }

  @Test
  void aSlotRangeMovedUnderLoadLosesNothingAndAppliesNothingTwice(Infra infra) throws Exception {
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, false);
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), cluster.uri(), infra.uniqueName("cluster-move"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      startPatient(h);
      int runs = 300;
      int waves = 6;
      send(h, runs, 0);
      long before = cluster.primaries().get(1).keyCount();
      Thread mover = new Thread(() -> cluster.migrateSlots(0, 1, 1_000), "slot-mover");
      mover.start(); // while the waves flow
      for (int e = 1; e < waves; e++) {
        send(h, runs, e);
        send(h, runs, e - 1); // Sume's retry of the previous event
      }
      mover.join(60_000);
      assertThat(mover.isAlive()).as("the slots moved within a minute").isFalse();
      send(h, runs, waves - 1); // copies of the last wave, after the move
      int records = runs * (2 * waves);
      awaitDecided(h, records);
      System.out.printf(
          "cluster, 1,000 slots moved: %d records; keys on the target %d -> %d; fallbacks %s;"
              + " duplicates redis %.0f store %.0f%n",
          records,
          before,
          cluster.primaries().get(1).keyCount(),
          fallbacks(h),
          h.count("duplicate", "redis"),
          h.count("duplicate", "store"));
      assertThat(cluster.primaries().get(1).keyCount()).isGreaterThan(before);
      assertThat(h.count("duplicate", "redis") + h.count("duplicate", "store"))
          .as("every copy caught, by one layer or the other")
          .isEqualTo(runs * waves);
      assertAppliedOnceInOrder(h, events, runs, waves);
      assertNoStreamThreadDied(h);
    }
  }

  @Test
  void aPrimaryKilledUnderLoadLosesNothingAndAppliesNothingTwice(Infra infra) {
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, true);
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), cluster.uri(), infra.uniqueName("cluster-kill"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      startPatient(h);
      int runs = 300;
      int waves = 6;
      for (int e = 0; e < waves; e++) {
        send(h, runs, e);
        if (e > 0) {
          send(h, runs, e - 1); // Sume's retry of the previous event
        }
        if (e == 2) {
          cluster.primaries().get(1).kill(); // the waves before are still being decided
        }
      }
      cluster.awaitPromoted(1);
      send(h, runs, waves - 1); // copies of the last wave, after the failover
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
      await() // the dead primary serves no slot any more: it must not hold the gauge at 0
          .atMost(Duration.ofSeconds(10))
          .until(() -> h.registry.get("runlane.processor.redis.available").gauge().value() == 1);
      assertAppliedOnceInOrder(h, events, runs, waves);
      assertNoStreamThreadDied(h);
    }
  }
}
