package dev.runlane.processor.dedup;

import dev.runlane.processor.dedup.RedisEndpoint.Kind;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.providers.ClusterConnectionProvider;
import redis.clients.jedis.providers.ConnectionProvider;
import redis.clients.jedis.providers.PooledConnectionProvider;
import redis.clients.jedis.providers.SentineledConnectionProvider;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The Redis nodes the dedup keys live on, through Jedis's own connection providers: one node; the
 * primary Sentinel names (followed across failovers by Jedis); or a cluster's primaries, by slot
 * (D82). A cluster or Sentinel that cannot be reached at start is reached at a later call, so the
 * processor starts on the run store as it does when one node is away.
 */
final class RedisNodes implements AutoCloseable {
  private static final Duration CREATE_RETRY = Duration.ofSeconds(1);

  private final RedisEndpoint endpoint;
  private final JedisClientConfig config;
  private final JedisClientConfig sentinelConfig;
  private final Object lock = new Object();
  private volatile ConnectionProvider provider;

  /**
   * When a cluster or Sentinel not reached may be tried again (System.nanoTime); guarded by lock.
   */
  private long nextAttemptNanos = System.nanoTime();

  /** Why the last attempt failed; guarded by lock. */
  private JedisException lastFailure;

  /** Cluster only: asks for the slot map again off the stream threads, at most one at a time. */
  private final ExecutorService refresher =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "runlane-redis-topology");
            t.setDaemon(true);
            return t;
          });

  private final AtomicBoolean refreshQueued = new AtomicBoolean();

  /**
   * @param config how the nodes holding the keys are asked
   * @param sentinelConfig how the sentinels are asked (Sentinel only)
   */
  RedisNodes(RedisEndpoint endpoint, JedisClientConfig config, JedisClientConfig sentinelConfig) {
    this.endpoint = endpoint;
    this.config = config;
    this.sentinelConfig = sentinelConfig;
    if (endpoint.kind() == Kind.STANDALONE) {
      provider = new PooledConnectionProvider(endpoint.nodes().get(0), config);
    } else {
      try {
        provider();
      } catch (JedisException e) {
        // Reached at the first call instead; verifyAccess says so at start.
      }
    }
  }

  RedisEndpoint endpoint() {
    return endpoint;
  }

  /** The node that holds {@code key}, or null when no node serves its slot now. */
  HostAndPort nodeOf(String key) {
    ConnectionProvider p = provider();
    if (p instanceof ClusterConnectionProvider cluster) {
      return cluster.getNode(JedisClusterCRC16.getSlot(key));
    }
    if (p instanceof SentineledConnectionProvider sentinel) {
      return sentinel.getCurrentMaster();
    }
    return endpoint.nodes().get(0);
  }

  /** A pooled connection to {@code node}; closing it gives it back. */
  Connection connection(HostAndPort node) {
    ConnectionProvider p = provider();
    if (p instanceof ClusterConnectionProvider cluster) {
      return cluster.getConnection(node);
    }
    return p.getConnection();
  }

  /**
   * A connection to a node or a seed, for the start check: the first seed that answers. Access
   * errors are thrown at once; if none answers, the last connection error.
   */
  Connection anyConnection() {
    if (endpoint.kind() == Kind.SENTINEL) {
      return provider().getConnection();
    }
    JedisException last = null;
    for (HostAndPort node : endpoint.nodes()) {
      try {
        return new Connection(node, config); // connects and authenticates
      } catch (JedisConnectionException e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * Sentinel only: asks each sentinel for a PING with the sentinels' credentials, so that a
   * sentinel refusing them is told at start rather than taken for a Redis that is away (D77). A
   * sentinel that does not answer is passed over, as a Redis away is; a refusal (NOAUTH, WRONGPASS,
   * ...) is thrown as Jedis's data exception.
   */
  void verifySentinels() {
    if (endpoint.kind() != Kind.SENTINEL) {
      return;
    }
    for (HostAndPort sentinel : endpoint.nodes()) {
      try (Connection connection = new Connection(sentinel, sentinelConfig)) {
        connection.ping();
      } catch (JedisConnectionException e) {
        // Away: the primary is found through another sentinel, or later.
      }
    }
  }

  /**
   * A node did not answer or redirected a key: the slot map may have changed (a failover, a slot
   * moved), so read it again in the background; the next round trips use it.
   */
  void topologyChanged() {
    if (endpoint.kind() != Kind.CLUSTER || !refreshQueued.compareAndSet(false, true)) {
      return;
    }
    refresher.execute(
        () -> {
          refreshQueued.set(false);
          try {
            ConnectionProvider p = provider();
            if (p instanceof ClusterConnectionProvider cluster) {
              cluster.renewSlotCache();
            }
          } catch (JedisException e) {
            // No node answered; the next failure asks again.
          }
        });
  }

  private ConnectionProvider provider() {
    ConnectionProvider p = provider;
    if (p != null) {
      return p;
    }
    synchronized (lock) {
      if (provider == null) {
        // At most one attempt a second: an unreachable seed list costs a connect timeout per
        // seed, which no stream thread should pay per batch.
        long now = System.nanoTime();
        if (now - nextAttemptNanos < 0) {
          throw new JedisConnectionException(
              "redis not reached (next attempt within 1 s): " + lastFailure, lastFailure);
        }
        nextAttemptNanos = now + CREATE_RETRY.toNanos();
        try {
          provider = create();
        } catch (JedisException e) {
          lastFailure = e;
          throw e;
        }
      }
      return provider;
    }
  }

  private ConnectionProvider create() {
    if (endpoint.kind() == Kind.CLUSTER) {
      return new ClusterConnectionProvider(Set.copyOf(endpoint.nodes()), config);
    }
    return new SentineledConnectionProvider(
        endpoint.master(), config, Set.copyOf(endpoint.nodes()), sentinelConfig);
  }

  @Override
  public void close() {
    refresher.shutdownNow();
    ConnectionProvider p = provider;
    if (p != null) {
      try {
        p.close();
      } catch (Exception e) {
        // Closing at shutdown: nothing to do about a pool that does not close cleanly.
      }
    }
  }
}
