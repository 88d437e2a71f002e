package dev.runlane.processor;

import static dev.runlane.processor.RedisWaves.assertAppliedOnceInOrder;
import static dev.runlane.processor.RedisWaves.assertNoStreamThreadDied;
import static dev.runlane.processor.RedisWaves.awaitDecided;
import static dev.runlane.processor.RedisWaves.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.embedded.EmbeddedRedisSentinel;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.embedded.TlsStores;
import dev.runlane.processor.dedup.RedisDedup;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The dedup layer through Sentinel (issue 41, D82, D77), over TLS and with a password on the
 * Sentinel: the primary killed under load, Sentinel promotes the replica, and the processor follows
 * it; nothing lost, nothing applied twice, and copies sent after the failover are caught by Redis
 * again, on the new primary.
 */
@RealInfra
class RedisSentinelIT {

  /**
   * Over TLS ({@code rediss+sentinel://}, the sentinel's TLS port) and with a password on the
   * Sentinel itself (D77): asked without it, the start check names {@code REDIS_SENTINEL_PASSWORD}.
   */
  @Test
  void theProcessorFollowsThePromotedReplicaLosingNothing(Infra infra) {
    TlsStores tls = TlsStores.shared();
    TlsStores.JvmTrust trust = tls.trustedByThisJvm();
    try (EmbeddedRedisSentinel group = EmbeddedRedisSentinel.start(tls, "sentinel-secret");
        ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), group.uri(), infra.uniqueName("sentinel"), 64);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      assertThat(group.uri().getScheme()).isEqualTo("rediss+sentinel");
      try (RedisDedup without =
          new RedisDedup(h.config().redisDedupSettings(), new SimpleMeterRegistry())) {
        assertThatThrownBy(without::verifyAccess)
            .as("the start check, without the Sentinel's password")
            .hasMessageContaining("REDIS_SENTINEL_PASSWORD");
      }
      h.with("REDIS_SENTINEL_PASSWORD", "sentinel-secret").start();
      int runs = 200;
      int waves = 5;
      for (int e = 0; e < waves - 1; e++) {
        send(h, runs, e);
        if (e > 0) {
          send(h, runs, e - 1); // Sume's retry of the previous event
        }
        if (e == 1) {
          group.primary().kill(); // the waves before are still being decided
        }
      }
      group.awaitPromoted();
      send(h, runs, waves - 1);
      send(h, runs, waves - 2);
      int records = runs * (2 * waves - 1);
      awaitDecided(h, records);
      // Copies of the last wave until Redis catches them: Jedis follows Sentinel's +switch-master
      // on its own thread, which may come a moment after the promotion is visible.
      double redisBefore = h.count("duplicate", "redis");
      int rounds = 0;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (h.count("duplicate", "redis") < redisBefore + runs) {
        assertThat(System.nanoTime())
            .as("the processor follows the promoted replica")
            .isLessThan(deadline);
        send(h, runs, waves - 1);
        rounds++;
        records += runs;
        awaitDecided(h, records);
      }
      System.out.printf(
          "sentinel, primary killed: duplicates redis %.0f store %.0f; keys on the new primary"
              + " %d; rounds of copies until Redis caught them %d%n",
          h.count("duplicate", "redis"),
          h.count("duplicate", "store"),
          group.replica().keyCount(),
          rounds);
      assertThat(h.count("duplicate", "redis") + h.count("duplicate", "store"))
          .as("every copy caught, by one layer or the other")
          .isEqualTo(records - runs * waves);
      assertAppliedOnceInOrder(h, events, runs, waves);
      assertNoStreamThreadDied(h);
    } finally {
      trust.close();
    }
  }
}
