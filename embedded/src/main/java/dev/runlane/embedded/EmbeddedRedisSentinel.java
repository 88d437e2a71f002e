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

  private EmbeddedRedisSentinel(
      EmbeddedRedis primary, EmbeddedRedis replica, RedisSentinel sentinel, int sentinelPort) {
    this.primary = primary;
    this.replica = replica;
    this.sentinel = sentinel;
    this.sentinelPort = sentinelPort;
  }

  /** Starts the primary, the replica (in sync) and the Sentinel (which knows both). */
  public static EmbeddedRedisSentinel start() {
    EmbeddedRedis primary = EmbeddedRedis.startOwned();
    EmbeddedRedis replica = null;
    try {
      replica =
          EmbeddedRedis.startOwned(List.of("replicaof " + primary.host() + " " + primary.port()));
      EmbeddedRedis r = replica;
      await("replica in sync", () -> info(r, "replication").contains("master_link_status:up"));
      int port = FreePorts.next();
      RedisSentinel sentinel =
          RedisSentinel.newRedisSentinel()
              .executableProvider(EmbeddedRedis::ownedBinary)
              .bind("127.0.0.1")
              .port(port)
              .masterName(MASTER)
              .masterPort(primary.port())
              .quorumSize(1)
              .downAfterMilliseconds(1000)
              .failOverTimeout(5000)
              .soutListener(line -> LOG.trace("redis-sentinel:{} {}", port, line))
              .serrListener(line -> LOG.debug("redis-sentinel:{} {}", port, line))
              .build();
      sentinel.start();
      EmbeddedRedisSentinel group = new EmbeddedRedisSentinel(primary, replica, sentinel, port);
      await(
          "sentinel knows the replica",
          () ->
              Resp.text("127.0.0.1", port, "INFO", "sentinel").contains("slaves=1")
                  && Resp.text("127.0.0.1", port, "INFO", "sentinel").contains("status=ok"));
      return group;
    } catch (IOException e) {
      close(primary, replica);
      throw new UncheckedIOException("cannot start redis-sentinel", e);
    } catch (RuntimeException e) {
      close(primary, replica);
      throw e;
    }
  }

  /** The processor's {@code REDIS_URL}: {@code redis+sentinel://127.0.0.1:<port>/runlane}. */
  public URI uri() {
    return URI.create("redis+sentinel://127.0.0.1:" + sentinelPort + "/" + MASTER);
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
                        Resp.call(
                            "127.0.0.1",
                            sentinelPort,
                            "SENTINEL",
                            "GET-MASTER-ADDR-BY-NAME",
                            MASTER))
                    .contains(Integer.toString(replica.port())));
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
