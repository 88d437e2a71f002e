package dev.runlane.processor.dedup;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One round trip to every node a batch's keys live on: one pipeline per node, the nodes answered in
 * parallel, so a batch costs one round trip per node rather than one per key (D82). A node that
 * cannot be reached, or fails mid-answer, fails only the commands sent to it; a node that is
 * backing off is not asked at all.
 *
 * <p>Used by one thread, for one call.
 */
final class NodeRound implements AutoCloseable {
  private final RedisNodes nodes;
  private final Predicate<HostAndPort> skip;
  private final Executor executor;
  private final Map<HostAndPort, Pipeline> pipelines = new LinkedHashMap<>();
  private final Map<HostAndPort, Connection> connections = new LinkedHashMap<>();
  private final Map<HostAndPort, JedisException> failed = new ConcurrentHashMap<>();
  private final Set<HostAndPort> asked = new HashSet<>();
  private final Set<HostAndPort> skipped = new HashSet<>();

  /** A command's answer, once the round is synced. */
  static final class Reply<T> {
    private final NodeRound round;
    private final HostAndPort node;
    private final Response<T> response;

    private Reply(NodeRound round, HostAndPort node, Response<T> response) {
      this.round = round;
      this.node = node;
      this.response = response;
    }

    /** The node the key lives on (null if no node served its slot). */
    HostAndPort node() {
      return node;
    }

    /**
     * The answer.
     *
     * @throws JedisException if the node did not answer, or answered this command with an error (a
     *     redirection, READONLY after a failover, OOM)
     */
    T get() {
      JedisException e = node == null ? null : round.failed.get(node);
      if (node == null || response == null || e != null) {
        throw new JedisConnectionException(
            "redis node " + node + " not asked or did not answer", e);
      }
      return response.get();
    }
  }

  NodeRound(RedisNodes nodes, Predicate<HostAndPort> skip, Executor executor) {
    this.nodes = nodes;
    this.skip = skip;
    this.executor = executor;
  }

  /** Queues {@code command} on the pipeline of the node that holds {@code key}. */
  <T> Reply<T> add(String key, Function<Pipeline, Response<T>> command) {
    HostAndPort node;
    try {
      node = nodes.nodeOf(key);
    } catch (JedisException e) {
      // A cluster or Sentinel not reached yet: its first seed stands for every key, so that the
      // failure is logged, counted and backed off as a node's is.
      node = nodes.endpoint().nodes().get(0);
      if (!asked.contains(node) && !failed.containsKey(node)) {
        failed.put(node, e);
      }
    }
    if (node == null || failed.containsKey(node)) {
      return new Reply<>(this, node, null);
    }
    if (!asked.contains(node) && skip.test(node)) {
      failed.put(node, new JedisConnectionException("backing off"));
      skipped.add(node);
      return new Reply<>(this, node, null);
    }
    asked.add(node);
    try {
      Pipeline pipeline = pipelines.get(node);
      if (pipeline == null) {
        Connection connection = nodes.connection(node);
        connections.put(node, connection);
        pipeline = new Pipeline(connection, false);
        pipelines.put(node, pipeline);
      }
      return new Reply<>(this, node, command.apply(pipeline));
    } catch (JedisException e) {
      failed.put(node, e);
      return new Reply<>(this, node, null);
    }
  }

  /** Sends every node its commands and reads the answers, the nodes in parallel. */
  void sync() {
    List<HostAndPort> toSync = new ArrayList<>();
    pipelines.keySet().stream().filter(n -> !failed.containsKey(n)).forEach(toSync::add);
    if (toSync.size() == 1) {
      syncOne(toSync.get(0));
      return;
    }
    List<CompletableFuture<Void>> others = new ArrayList<>();
    for (HostAndPort node : toSync.subList(Math.min(1, toSync.size()), toSync.size())) {
      others.add(CompletableFuture.runAsync(() -> syncOne(node), executor));
    }
    if (!toSync.isEmpty()) {
      syncOne(toSync.get(0));
    }
    for (CompletableFuture<Void> f : others) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new JedisConnectionException("interrupted waiting for redis", e);
      } catch (ExecutionException e) {
        throw new IllegalStateException("a redis node's sync failed unexpectedly", e.getCause());
      }
    }
  }

  private void syncOne(HostAndPort node) {
    try {
      pipelines.get(node).sync();
    } catch (RuntimeException e) {
      // Whatever went wrong with one node fails its keys, never the stream thread.
      failed.put(
          node,
          e instanceof JedisException je ? je : new JedisConnectionException(e.toString(), e));
    }
  }

  /** The nodes that were asked and answered. */
  Set<HostAndPort> answered() {
    Set<HostAndPort> answered = new HashSet<>(asked);
    answered.removeAll(failed.keySet());
    return answered;
  }

  /** The nodes that were asked and did not answer, with why (not those backing off). */
  Map<HostAndPort, JedisException> failed() {
    Map<HostAndPort, JedisException> asked = new HashMap<>(failed);
    skipped.forEach(asked::remove);
    return asked;
  }

  /**
   * Gives the connections back; a broken one is dropped by its pool. Dropping one throws when the
   * pool's replacement cannot connect (the node is down): the node's failure is known already, and
   * a stream thread must never die of it.
   */
  @Override
  public void close() {
    for (Connection connection : connections.values()) {
      try {
        connection.close();
      } catch (JedisException e) {
        // The connection is gone either way; its node already counts as not answering.
      }
    }
  }
}
