package dev.runlane.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of owned {@code redis-server} processes (the same binary as {@link
 * EmbeddedRedis}, no Docker): {@code n} primaries with the 16384 slots split evenly in order, and
 * optionally one replica each. Failure detection is fast (a 1 s node timeout), and a cluster with a
 * primary down keeps serving the other slots ({@code cluster-require-full-coverage no}), as the
 * managed offerings do by default.
 */
public final class EmbeddedRedisCluster implements AutoCloseable {
  private static final int SLOTS = 16_384;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(50);

  private final List<EmbeddedRedis> primaries;
  private final List<EmbeddedRedis> replicas;
  private final boolean tls;

  private EmbeddedRedisCluster(
      List<EmbeddedRedis> primaries, List<EmbeddedRedis> replicas, boolean tls) {
    this.primaries = primaries;
    this.replicas = replicas;
    this.tls = tls;
  }

  /** Starts {@code primaryCount} primaries (and a replica for each if asked), slots assigned. */
  public static EmbeddedRedisCluster start(int primaryCount, boolean withReplicas) {
    return start(primaryCount, withReplicas, null);
  }

  /**
   * Like {@link #start(int, boolean)}; with {@code tls} not null, a cluster that speaks TLS to its
   * clients and between its nodes, and announces its nodes' TLS ports ({@code rediss+cluster://}).
   */
  public static EmbeddedRedisCluster start(int primaryCount, boolean withReplicas, TlsStores tls) {
    Path dir;
    try {
      dir = Files.createTempDirectory("runlane-redis-cluster");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<EmbeddedRedis> primaries = new ArrayList<>();
    List<EmbeddedRedis> replicas = new ArrayList<>();
    EmbeddedRedisCluster cluster = new EmbeddedRedisCluster(primaries, replicas, tls != null);
    try {
      for (int i = 0; i < primaryCount; i++) {
        primaries.add(EmbeddedRedis.startOwned(settings(dir, "p" + i), tls));
        if (withReplicas) {
          replicas.add(EmbeddedRedis.startOwned(settings(dir, "r" + i), tls));
        }
      }
      cluster.assemble();
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  private static List<String> settings(Path dir, String name) {
    return List.of(
        "cluster-enabled yes",
        "cluster-config-file " + dir.resolve("nodes-" + name + ".conf"),
        "cluster-node-timeout 1000",
        "cluster-require-full-coverage no",
        // A replica may always take over, however long it was cut off: tests kill primaries.
        "cluster-replica-validity-factor 0");
  }

  private void assemble() {
    EmbeddedRedis first = primaries.get(0);
    for (EmbeddedRedis node : nodes()) {
      if (node != first) {
        Resp.call(first.host(), first.port(), "CLUSTER", "MEET", node.host(), "" + announced(node));
      }
    }
    for (int i = 0; i < primaries.size(); i++) {
      List<String> args = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
      for (int slot = firstSlot(i); slot < firstSlot(i + 1); slot++) {
        args.add(Integer.toString(slot));
      }
      EmbeddedRedis p = primaries.get(i);
      Resp.call(p.host(), p.port(), args.toArray(String[]::new));
    }
    int total = nodes().size();
    await("every node knows every other", () -> nodes().stream().allMatch(n -> known(n) == total));
    for (int i = 0; i < replicas.size(); i++) {
      EmbeddedRedis p = primaries.get(i);
      String id = Resp.text(p.host(), p.port(), "CLUSTER", "MYID");
      EmbeddedRedis r = replicas.get(i);
      Resp.call(r.host(), r.port(), "CLUSTER", "REPLICATE", id);
    }
    await("cluster_state:ok on every node", () -> nodes().stream().allMatch(this::clusterOk));
    for (EmbeddedRedis r : replicas) {
      await(
          "replica " + r.port() + " in sync",
          () -> info(r, "replication").contains("master_link_status:up"));
    }
  }

  /**
   * The processor's {@code REDIS_URL} for this cluster: {@code redis+cluster://} ({@code
   * rediss+cluster://} with TLS) and every primary as a seed.
   */
  public URI uri() {
    return URI.create(
        (tls ? "rediss+cluster://" : "redis+cluster://")
            + primaries.stream()
                .map(p -> p.host() + ":" + announced(p))
                .collect(Collectors.joining(",")));
  }

  /** The port clients and the other nodes reach {@code node} on: its TLS port with TLS. */
  private int announced(EmbeddedRedis node) {
    return tls ? node.tlsPort() : node.port();
  }

  public List<EmbeddedRedis> primaries() {
    return List.copyOf(primaries);
  }

  /** The replica of primary {@code i}; only in a cluster started with replicas. */
  public EmbeddedRedis replica(int i) {
    return replicas.get(i);
  }

  /** The index of the primary that was given {@code key}'s slot at start. */
  public int primaryIndexOf(String key) {
    EmbeddedRedis any = primaries.get(0);
    long slot = (Long) Resp.call(any.host(), any.port(), "CLUSTER", "KEYSLOT", key);
    for (int i = 0; i < primaries.size(); i++) {
      if (slot < firstSlot(i + 1)) {
        return i;
      }
    }
    throw new IllegalStateException("slot " + slot + " out of range");
  }

  /**
   * Moves the first {@code count} slots of primary {@code from} to primary {@code to}, keys and
   * all, slot by slot as {@code redis-cli --cluster reshard} does: the slot importing on the target
   * and migrating on the source (the source answers {@code ASK} for keys already moved), its keys
   * moved by {@code MIGRATE}, then given to the target on every primary ({@code MOVED} from then
   * on).
   */
  public void migrateSlots(int from, int to, int count) {
    EmbeddedRedis src = primaries.get(from);
    EmbeddedRedis dst = primaries.get(to);
    String srcId = Resp.text(src.host(), src.port(), "CLUSTER", "MYID");
    String dstId = Resp.text(dst.host(), dst.port(), "CLUSTER", "MYID");
    for (int slot = firstSlot(from); slot < firstSlot(from) + count; slot++) {
      String s = Integer.toString(slot);
      Resp.call(dst.host(), dst.port(), "CLUSTER", "SETSLOT", s, "IMPORTING", srcId);
      Resp.call(src.host(), src.port(), "CLUSTER", "SETSLOT", s, "MIGRATING", dstId);
      while (true) {
        Object keys = Resp.call(src.host(), src.port(), "CLUSTER", "GETKEYSINSLOT", s, "100");
        List<?> batch = (List<?>) keys;
        if (batch.isEmpty()) {
          break;
        }
        List<String> args =
            new ArrayList<>(
                List.of("MIGRATE", dst.host(), "" + dst.port(), "", "0", "5000", "KEYS"));
        batch.forEach(k -> args.add(String.valueOf(k)));
        Resp.call(src.host(), src.port(), args.toArray(String[]::new));
      }
      Resp.call(dst.host(), dst.port(), "CLUSTER", "SETSLOT", s, "NODE", dstId);
      Resp.call(src.host(), src.port(), "CLUSTER", "SETSLOT", s, "NODE", dstId);
      for (EmbeddedRedis other : primaries) {
        if (other != src && other != dst) {
          Resp.call(other.host(), other.port(), "CLUSTER", "SETSLOT", s, "NODE", dstId);
        }
      }
    }
  }

  /**
   * Restarts every node, as after a power cut without persistence: every key is gone, and each node
   * comes back as itself with its slots (its {@code nodes.conf}). Returns once the cluster serves
   * every slot again.
   */
  public void restart() {
    for (EmbeddedRedis node : nodes()) {
      node.restart();
    }
    int total = nodes().size();
    await("every node knows every other", () -> nodes().stream().allMatch(n -> known(n) == total));
    await("cluster_state:ok on every node", () -> nodes().stream().allMatch(this::clusterOk));
  }

  /** Waits until the replica of primary {@code i} has taken over its slots. */
  public void awaitPromoted(int i) {
    EmbeddedRedis r = replicas.get(i);
    await(
        "replica " + r.port() + " promoted",
        () -> info(r, "replication").contains("role:master") && clusterOk(r));
  }

  private int firstSlot(int primary) {
    return (int) ((long) SLOTS * primary / primaries.size());
  }

  private List<EmbeddedRedis> nodes() {
    List<EmbeddedRedis> all = new ArrayList<>(primaries);
    all.addAll(replicas);
    return all;
  }

  private static long known(EmbeddedRedis node) {
    return Resp.text(node.host(), node.port(), "CLUSTER", "NODES").lines().count();
  }

  private boolean clusterOk(EmbeddedRedis node) {
    return Resp.text(node.host(), node.port(), "CLUSTER", "INFO").contains("cluster_state:ok");
  }

  private static String info(EmbeddedRedis node, String section) {
    return Resp.text(node.host(), node.port(), "INFO", section);
  }

  private static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("redis cluster: not " + what + " within " + READY_TIMEOUT);
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }

  /** Stops every node; the first failure is thrown once the others are stopped too. */
  @Override
  public void close() {
    RuntimeException first = null;
    for (EmbeddedRedis node : nodes()) {
      try {
        node.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
