package dev.runlane.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisSentinel;

/**
 * A primary, its replica and one Sentinel watching them (quorum 1), all owned {@code redis-server}
 * processes of the same binary as {@link EmbeddedRedis}: a primary that dies is declared down after
 * 1 s and the replica promoted.
 */
public final class EmbeddedRedisSentinel implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedRedisSentinel.class);
  private static final String MASTER = "runlane";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(50);

  private final EmbeddedRedis primary;
  private final EmbeddedRedis replica;
  private final RedisSentinel sentinel;
  private final int sentinelPort;
  private final int sentinelTlsPort; // 0 without TLS
  private final String sentinelPassword; // null: none

  private EmbeddedRedisSentinel(
      EmbeddedRedis primary,
      EmbeddedRedis replica,
      RedisSentinel sentinel,
      int sentinelPort,
      int sentinelTlsPort,
      String sentinelPassword) {
    this.primary = primary;
    this.replica = replica;
    this.sentinel = sentinel;
    this.sentinelPort = sentinelPort;
    this.sentinelTlsPort = sentinelTlsPort;
    this.sentinelPassword = sentinelPassword;
  }

  /** Starts the primary, the replica (in sync) and the Sentinel (which knows both). */
  public static EmbeddedRedisSentinel start() {
    return start(null, null);
  }

  /**
   * Like {@link #start()}; with {@code tls}, every process also speaks TLS with {@code tls}'s
   * certificate, the Sentinel to the primary and the replica too, so the addresses it gives out are
   * TLS ports ({@code rediss+sentinel://}); with {@code sentinelPassword}, the Sentinel itself asks
   * for that password ({@code requirepass} in its own configuration).
   */
  public static EmbeddedRedisSentinel start(TlsStores tls, String sentinelPassword) {
    EmbeddedRedis primary = EmbeddedRedis.startOwned(List.of(), tls);
    EmbeddedRedis replica = null;
    try {
      replica =
          EmbeddedRedis.startOwned(
              List.of("replicaof " + primary.host() + " " + announced(primary)), tls);
      EmbeddedRedis r = replica;
      await("replica in sync", () -> info(r, "replication").contains("master_link_status:up"));
      int port = FreePorts.next();
      int tlsPort = tls == null ? 0 : FreePorts.next();
      var builder =
          RedisSentinel.newRedisSentinel()
              .executableProvider(EmbeddedRedis::ownedBinary)
              .bind("127.0.0.1")
              .port(port)
              .masterName(MASTER)
              .masterPort(announced(primary))
              .quorumSize(1)
              .downAfterMilliseconds(1000)
              .failOverTimeout(5000);
      // The monitor lines now: the builder leaves them out once any other setting is given.
      builder.addDefaultReplicationGroup();
      if (tls != null) {
        EmbeddedRedis.tlsSettings(tls, tlsPort).stream()
            .filter(line -> !line.startsWith("tls-cluster"))
            .forEach(builder::setting);
      }
      if (sentinelPassword != null) {
        builder.setting("requirepass " + sentinelPassword);
      }
      RedisSentinel sentinel =
          builder
              .soutListener(line -> LOG.trace("redis-sentinel:{} {}", port, line))
              .serrListener(line -> LOG.debug("redis-sentinel:{} {}", port, line))
              .build();
      sentinel.start();
      EmbeddedRedisSentinel group =
          new EmbeddedRedisSentinel(primary, replica, sentinel, port, tlsPort, sentinelPassword);
      await(
          "sentinel knows the replica",
          () ->
              group.sentinelInfo().contains("slaves=1")
                  && group.sentinelInfo().contains("status=ok"));
      return group;
    } catch (IOException e) {
      close(primary, replica);
      throw new UncheckedIOException("cannot start redis-sentinel", e);
    } catch (RuntimeException e) {
      close(primary, replica);
      throw e;
    }
  }

  /**
   * The processor's {@code REDIS_URL}: {@code redis+sentinel://127.0.0.1:<port>/runlane}, or {@code
   * rediss+sentinel://} and the Sentinel's TLS port with TLS.
   */
  public URI uri() {
    return URI.create(
        sentinelTlsPort == 0
            ? "redis+sentinel://127.0.0.1:" + sentinelPort + "/" + MASTER
            : "rediss+sentinel://127.0.0.1:" + sentinelTlsPort + "/" + MASTER);
  }

  private String sentinelInfo() {
    return String.valueOf(
        Resp.callWithPassword("127.0.0.1", sentinelPort, sentinelPassword, "INFO", "sentinel"));
  }

  /** The port the others reach {@code node} on: its TLS port with TLS. */
  private static int announced(EmbeddedRedis node) {
    return node.tlsPort() != 0 ? node.tlsPort() : node.port();
  }

  public EmbeddedRedis primary() {
    return primary;
  }

  public EmbeddedRedis replica() {
    return replica;
  }

  /** Waits until Sentinel has promoted the replica. */
  public void awaitPromoted() {
    await(
        "replica promoted",
        () ->
            info(replica, "replication").contains("role:master")
                && String.valueOf(
                        Resp.callWithPassword(
                            "127.0.0.1",
                            sentinelPort,
                            sentinelPassword,
                            "SENTINEL",
                            "GET-MASTER-ADDR-BY-NAME",
                            MASTER))
                    .contains(Integer.toString(announced(replica))));
  }

  private static String info(EmbeddedRedis node, String section) {
    return Resp.text(node.host(), node.port(), "INFO", section);
  }

  private static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("redis sentinel: not " + what + " within " + READY_TIMEOUT);
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }

  private static void close(EmbeddedRedis... nodes) {
    for (EmbeddedRedis node : nodes) {
      if (node != null) {
        node.close();
      }
    }
  }

  @Override
  public void close() {
    try {
      sentinel.stop();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop redis-sentinel on port " + sentinelPort, e);
    } finally {
      close(primary, replica);
    }
  }
}
