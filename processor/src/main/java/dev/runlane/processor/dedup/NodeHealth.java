package dev.runlane.processor.dedup;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.HostAndPort;

/**
 * Which Redis nodes answer. A node that failed, or answered slower than {@code slowAfter}, is not
 * asked again for {@code retryBackoff}, so a dead or crawling node costs one timeout per backoff
 * period rather than one per batch (D42), and only the keys it holds decide on the run store
 * meanwhile (D82). State changes are logged once per node; the keys sent to the run store are
 * counted per node.
 */
final class NodeHealth {
  private static final Logger log = LoggerFactory.getLogger(RedisDedup.class);

  private final MeterRegistry registry;
  private final long retryBackoffNanos;
  private final LongSupplier nanoTime;
  private final Map<HostAndPort, Long> retryAt = new ConcurrentHashMap<>();
  private final Map<HostAndPort, Counter> fallbacks = new ConcurrentHashMap<>();

  NodeHealth(MeterRegistry registry, long retryBackoffNanos, LongSupplier nanoTime) {
    this.registry = registry;
    this.retryBackoffNanos = retryBackoffNanos;
    this.nanoTime = nanoTime;
    DedupMetrics.availability(registry, this);
  }

  /** Whether {@code node} failed less than the backoff ago: not asked, its keys decided alone. */
  boolean backingOff(HostAndPort node) {
    Long at = retryAt.get(node);
    return at != null && nanoTime.getAsLong() - at < 0;
  }

  /** {@code node} did not answer {@code op}. */
  void failed(HostAndPort node, String op, Exception e) {
    if (retryAt.put(node, nanoTime.getAsLong() + retryBackoffNanos) == null) {
      log.warn(
          "redis {} unavailable during {}: the keys it holds are decided on the run store alone"
              + " (degraded) until it answers again: {}",
          node,
          op,
          e.toString());
    }
  }

  /** The round trip to {@code nodes} took {@code tookNanos}, over {@code slowAfterNanos}. */
  void slow(Collection<HostAndPort> nodes, String op, long tookNanos, long slowAfterNanos) {
    for (HostAndPort node : nodes) {
      if (retryAt.put(node, nanoTime.getAsLong() + retryBackoffNanos) == null) {
        log.warn(
            "redis slow: a {} to {} took {} ms, over REDIS_SLOW_MS={}; the keys it holds are"
                + " decided on the run store alone (degraded) for {} ms before asking again",
            op,
            node,
            tookNanos / 1_000_000,
            slowAfterNanos / 1_000_000,
            retryBackoffNanos / 1_000_000);
      }
    }
  }

  /** {@code node} answered in time. */
  void answered(HostAndPort node) {
    if (retryAt.remove(node) != null) {
      log.info("redis {} available again: dedup claims on its keys resumed", node);
    }
  }

  /** {@code keys} of {@code node} were decided on the run store, as it did not answer. */
  void fellBack(HostAndPort node, int keys) {
    fallbacks
        .computeIfAbsent(node, n -> DedupMetrics.nodeFallbacks(registry, String.valueOf(n)))
        .increment(keys);
  }

  /**
   * Whether no node failed within the last two back-off periods. A node that holds keys is asked
   * again after each back-off and fails again while it is down; one that no key maps to any more (a
   * primary replaced by its replica) is no longer asked, and stops counting, rather than hold the
   * gauge at 0 for ever.
   */
  boolean allAnswering() {
    long now = nanoTime.getAsLong();
    return retryAt.values().stream().noneMatch(at -> now - at < retryBackoffNanos);
  }
}
