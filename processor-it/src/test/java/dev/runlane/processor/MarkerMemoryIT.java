package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.EmbeddedRedisCluster;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.dedup.RedisDedup.RedisDedupSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What a done marker costs in Redis memory, the input of the sizing model (operations.md "Sizing",
 * D84): 100,000 markers as the processor writes them (a UUID request id under the default prefix,
 * {@code done:<task>@<run tag>}, the 24 h TTL), on one node and on a 3-primary cluster, measured as
 * the {@code used_memory} delta per key. Fails if a marker grows past the model's figure.
 */
class MarkerMemoryIT {
  private static final int MARKERS = 100_000;
  private static final int PER_CALL = 1_000;

  /**
   * The figures the sizing model uses, with headroom over what was measured on Redis 6.2 (165 B and
   * 267 B: a cluster node also indexes every key by slot).
   */
  private static final double MODEL_BYTES = 200;

  private static final double MODEL_CLUSTER_BYTES = 300;

  @Test
  void aMarkerCostsWhatTheSizingModelSays() {
    double single;
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned()) {
      long before = usedMemory(redis);
      write(redis.uri());
      single = (usedMemory(redis) - before) / (double) MARKERS;
      assertThat(redis.keyCount()).isEqualTo(MARKERS);
    }
    double cluster;
    try (EmbeddedRedisCluster c = EmbeddedRedisCluster.start(3, false)) {
      long before = c.primaries().stream().mapToLong(MarkerMemoryIT::usedMemory).sum();
      write(c.uri());
      long after = c.primaries().stream().mapToLong(MarkerMemoryIT::usedMemory).sum();
      cluster = (after - before) / (double) MARKERS;
      assertThat(c.primaries().stream().mapToLong(EmbeddedRedis::keyCount).sum())
          .isEqualTo(MARKERS);
    }
    System.out.printf(
        "marker memory: %,d markers; used_memory per marker: one node %.0f B, 3-primary cluster"
            + " %.0f B%n",
        MARKERS, single, cluster);
    assertThat(single).isLessThan(MODEL_BYTES);
    assertThat(cluster).isLessThan(MODEL_CLUSTER_BYTES);
  }

  private static void write(URI uri) {
    RedisDedupSettings settings =
        new RedisDedupSettings(
            uri,
            RedisDedupSettings.DEFAULT_KEY_PREFIX,
            Duration.ofSeconds(60),
            Duration.ofHours(24),
            Duration.ofSeconds(2),
            Duration.ofSeconds(1));
    try (RedisDedup dedup = new RedisDedup(settings, new SimpleMeterRegistry())) {
      for (int call = 0; call < MARKERS / PER_CALL; call++) {
        List<Marker> markers = new ArrayList<>(PER_CALL);
        for (int i = 0; i < PER_CALL; i++) {
          String run = "run_" + UUID.randomUUID().toString().substring(0, 20);
          markers.add(new Marker(new EventKey(UUID.randomUUID().toString(), run), false));
        }
        assertThat(dedup.markDone("0_" + (call % 12), markers)).isEmpty();
      }
    }
  }

  private static long usedMemory(EmbeddedRedis node) {
    try (Jedis jedis = new Jedis(node.host(), node.port())) {
      return jedis
          .info("memory")
          .lines()
          .filter(l -> l.startsWith("used_memory:"))
          .mapToLong(l -> Long.parseLong(l.substring("used_memory:".length()).trim()))
          .findFirst()
          .orElseThrow();
    }
  }
}
