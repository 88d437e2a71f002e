package dev.runlane.processor.dedup;

import dev.runlane.common.config.Secret;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.params.SetParams;

/**
 * {@link Dedup} on Redis: one node, a Redis Cluster or a Sentinel-managed primary ({@link
 * RedisEndpoint}, D82). Each call is one round trip per node the keys live on ({@link NodeRound}):
 * the claims ({@code SET NX EX} + {@code GET} per id, which works on Redis 6.2, unlike {@code SET
 * NX GET}) of one or more tasks, led by the done markers they owe; done markers alone; a
 * compare-and-delete script for releases; reads. Every command touches one key, so a cluster needs
 * no cross-slot command.
 *
 * <p>A node that fails or answers slowly is not asked again for {@code retryBackoff} ({@link
 * NodeHealth}); only the keys it holds decide on the run store meanwhile. When no node needed
 * answers, the call throws, as for one node.
 */
public final class RedisDedup implements Dedup {
  private static final String RELEASE_SCRIPT =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

  private final RedisNodes nodes;
  private final String keyPrefix;
  private final SetParams claimParams;
  private final SetParams doneParams;
  private final long slowAfterNanos;
  private final LongSupplier nanoTime;
  private final NodeHealth health;
  private final ExecutorService syncPool;
  private final Timer claimTimer;
  private final Timer doneTimer;
  private final Timer releaseTimer;
  private final Timer readTimer;

  public RedisDedup(RedisDedupSettings settings, MeterRegistry registry) {
    this(settings, registry, System::nanoTime);
  }

  RedisDedup(RedisDedupSettings settings, MeterRegistry registry, LongSupplier nano) {
    JedisClientConfig config = clientConfig(settings);
    this.nodes =
        new RedisNodes(
            RedisEndpoint.parse(settings.uri()), config, sentinelConfig(settings, config));
    this.keyPrefix = settings.keyPrefix();
    this.claimParams = SetParams.setParams().nx().ex(settings.claimTtl().toSeconds());
    this.doneParams = SetParams.setParams().ex(settings.doneTtl().toSeconds());
    this.slowAfterNanos = settings.slowAfter().toNanos();
    this.nanoTime = nano;
    this.health = new NodeHealth(registry, settings.retryBackoff().toNanos(), nano);
    // The nodes of a round answer in parallel; the calling thread reads one of them itself.
    this.syncPool =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "runlane-redis-sync");
              t.setDaemon(true);
              return t;
            });
    this.claimTimer = DedupMetrics.redisLatency(registry, "claim");
    this.doneTimer = DedupMetrics.redisLatency(registry, "done");
    this.releaseTimer = DedupMetrics.redisLatency(registry, "release");
    this.readTimer = DedupMetrics.redisLatency(registry, "read");
  }

  private static JedisClientConfig clientConfig(RedisDedupSettings settings) {
    RedisEndpoint endpoint = RedisEndpoint.parse(settings.uri());
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis((int) settings.timeout().toMillis())
            .socketTimeoutMillis((int) settings.timeout().toMillis())
            .clientName("runlane-processor");
    if (endpoint.tls()) {
      // The certificate chain against the JDK's trust store and the host name against the
      // certificate, as for https://: what the deprecated ssl(true) did, through its replacement.
      config.sslOptions(SslOptions.defaults());
    }
    settings.username().or(endpoint::user).ifPresent(config::user);
    settings.password().map(Secret::reveal).or(endpoint::password).ifPresent(config::password);
    if (endpoint.database() != 0) {
      config.database(endpoint.database());
    }
    return config.build();
  }

  /**
   * How the sentinels are asked: with the primary's TLS and timeouts, without its credentials or
   * database; with their own user and password when set ({@code REDIS_SENTINEL_USERNAME}, {@code
   * REDIS_SENTINEL_PASSWORD}, D77).
   */
  private static JedisClientConfig sentinelConfig(
      RedisDedupSettings settings, JedisClientConfig primary) {
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(primary.getConnectionTimeoutMillis())
            .socketTimeoutMillis(primary.getSocketTimeoutMillis())
            .clientName(primary.getClientName())
            // RESP2, as the primary's connections: without it Jedis warns on every sentinel
            // connection that it cannot negotiate RESP3.
            .autoNegotiateProtocol(false);
    if (primary.getSslOptions() != null) {
      config.sslOptions(primary.getSslOptions());
    }
    settings.sentinelUsername().ifPresent(config::user);
    settings.sentinelPassword().map(Secret::reveal).ifPresent(config::password);
    return config.build();
  }

  /**
   * Fails at start if Redis refuses the credentials: that cannot fix itself, unlike Redis being
   * away, which the processor rides out on the run store (so an unreachable Redis passes).
   *
   * @throws IllegalStateException naming the settings to check
   */
  @Override
  public void verifyAccess() {
    try {
      nodes.verifySentinels();
    } catch (JedisAccessControlException e) {
      throw new IllegalStateException(
          "Redis Sentinel refused the credentials ("
              + e.getMessage()
              + "): check REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD");
    } catch (JedisDataException e) {
      throw new IllegalStateException(
          "Redis Sentinel refused to answer ("
              + e.getMessage()
              + "): if it asks for a password, set REDIS_SENTINEL_PASSWORD");
    }
    try (Connection connection = nodes.anyConnection()) {
      connection.ping();
    } catch (JedisAccessControlException e) {
      throw new IllegalStateException(
          "Redis refused the credentials ("
              + e.getMessage()
              + "): check REDIS_USERNAME and REDIS_PASSWORD (or the user info of REDIS_URL)");
    } catch (JedisDataException e) {
      if (e.getMessage() != null && e.getMessage().startsWith("NOAUTH")) {
        throw new IllegalStateException(
            "Redis needs a password and none was given: set REDIS_PASSWORD ("
                + e.getMessage()
                + ")");
      }
      throw e;
    } catch (JedisException e) {
      LoggerFactory.getLogger(RedisDedup.class)
          .warn(
              "redis not reachable at start (deciding on the run store until it is): {}",
              e.toString());
    }
  }

  @Override
  public ClaimAnswer claim(List<ClaimRequest> requests) {
    long start = nanoTime.getAsLong();
    try (NodeRound round = round()) {
      // First, so that a copy of a decided id in this round trip reads done, not our old claim.
      Map<String, List<NodeRound.Reply<String>>> done = new HashMap<>();
      for (ClaimRequest request : requests) {
        setDone(round, request.owner(), request.doneFirst(), done);
      }
      List<List<NodeRound.Reply<String>>> sets = new ArrayList<>(requests.size());
      List<List<NodeRound.Reply<String>>> gets = new ArrayList<>(requests.size());
      for (ClaimRequest request : requests) {
        List<NodeRound.Reply<String>> requestSets = new ArrayList<>(request.events().size());
        List<NodeRound.Reply<String>> requestGets = new ArrayList<>(request.events().size());
        for (EventKey event : request.events()) {
          String key = key(event.requestId());
          String value = MarkerValues.processing(request.owner(), event.runId());
          requestSets.add(round.add(key, p -> p.set(key, value, claimParams)));
          requestGets.add(round.add(key, p -> p.get(key)));
        }
        sets.add(requestSets);
        gets.add(requestGets);
      }
      round.sync();
      Answers answers = new Answers("claim");
      List<Map<String, Claim>> claims = new ArrayList<>(requests.size());
      for (int r = 0; r < requests.size(); r++) {
        ClaimRequest request = requests.get(r);
        Map<String, Claim> requestClaims = new HashMap<>(request.events().size() * 2);
        int i = 0;
        for (EventKey event : request.events()) {
          requestClaims.put(
              event.requestId(),
              claimOf(answers, sets.get(r).get(i), gets.get(r).get(i), request.owner(), event));
          i++;
        }
        claims.add(requestClaims);
      }
      Set<String> unwritten = answers.unwritten(done);
      answers.settle(round, claimTimer, start);
      return new ClaimAnswer(claims, unwritten);
    }
  }

  /**
   * The claim {@code set} and {@code get} say; per-command errors (a redirection while a slot
   * moves, READONLY after a failover, OOM under noeviction) mean "Redis cannot answer" for this key
   * like a dead node does.
   */
  private Claim claimOf(
      Answers answers,
      NodeRound.Reply<String> set,
      NodeRound.Reply<String> get,
      String owner,
      EventKey event) {
    try {
      String setAnswer = set.get();
      String value = get.get();
      answers.answered();
      return "OK".equals(setAnswer) ? Claim.NEW : MarkerValues.read(value, owner, event.runId());
    } catch (JedisException e) {
      answers.missed(set.node(), e);
      answers.decidedAlone(set.node());
      return Claim.UNAVAILABLE;
    }
  }

  @Override
  public Set<String> takenForOtherRuns(Collection<EventKey> events) {
    if (events.isEmpty()) {
      return Set.of();
    }
    long start = nanoTime.getAsLong();
    List<EventKey> asked = List.copyOf(events);
    Set<String> taken = new HashSet<>();
    try (NodeRound round = round()) {
      // One GET per key on each node's pipeline, not MGET: a cluster's MGET must not span slots.
      List<NodeRound.Reply<String>> values = new ArrayList<>(asked.size());
      for (EventKey event : asked) {
        String key = key(event.requestId());
        values.add(round.add(key, p -> p.get(key)));
      }
      round.sync();
      Answers answers = new Answers("read");
      for (int i = 0; i < asked.size(); i++) {
        try {
          if (MarkerValues.namesOtherRun(values.get(i).get(), asked.get(i).runId())) {
            taken.add(asked.get(i).requestId());
          }
          answers.answered();
        } catch (JedisException e) {
          answers.missed(values.get(i).node(), e); // knows nothing of it: says none, as before
        }
      }
      answers.settle(round, readTimer, start);
    }
    return taken;
  }

  @Override
  public Set<String> markDone(String owner, Collection<Marker> markers) {
    if (markers.isEmpty()) {
      return Set.of();
    }
    long start = nanoTime.getAsLong();
    try (NodeRound round = round()) {
      Map<String, List<NodeRound.Reply<String>>> done = new HashMap<>();
      setDone(round, owner, markers, done);
      round.sync();
      Answers answers = new Answers("done");
      Set<String> unwritten = answers.unwritten(done);
      answers.settle(round, doneTimer, start);
      return unwritten;
    }
  }

  @Override
  public void release(String owner, Collection<EventKey> events) {
    if (events.isEmpty()) {
      return;
    }
    long start = nanoTime.getAsLong();
    // EVAL, not EVALSHA: releases are rare, and EVAL cannot fail with NOSCRIPT after a restart.
    try (NodeRound round = round()) {
      List<NodeRound.Reply<Object>> replies = new ArrayList<>(events.size());
      for (EventKey event : events) {
        String key = key(event.requestId());
        List<String> arg = List.of(MarkerValues.processing(owner, event.runId()));
        replies.add(round.add(key, p -> p.eval(RELEASE_SCRIPT, List.of(key), arg)));
      }
      round.sync();
      Answers answers = new Answers("release");
      for (NodeRound.Reply<Object> reply : replies) {
        try {
          reply.get();
          answers.answered();
        } catch (JedisException e) {
          answers.missed(reply.node(), e); // the claim expires after the claim TTL
        }
      }
      answers.settle(round, releaseTimer, start);
    }
  }

  private NodeRound round() {
    return new NodeRound(nodes, health::backingOff, syncPool);
  }

  private void setDone(
      NodeRound round,
      String owner,
      Collection<Marker> markers,
      Map<String, List<NodeRound.Reply<String>>> done) {
    for (Marker marker : markers) {
      EventKey event = marker.event();
      String key = key(event.requestId());
      String value = MarkerValues.done(owner, event.runId(), marker.stale());
      done.computeIfAbsent(event.requestId(), id -> new ArrayList<>())
          .add(round.add(key, p -> p.set(key, value, doneParams)));
    }
  }

  /**
   * What one call's answers came to: how many keys were answered, which nodes missed which. Settled
   * once per call: a call that no node answered throws, as one Redis that is away did.
   */
  private final class Answers {
    private final String op;
    private int answered;
    private int missed;
    private final Map<HostAndPort, Integer> decidedAloneByNode = new HashMap<>();
    private JedisException firstError;

    Answers(String op) {
      this.op = op;
    }

    void answered() {
      answered++;
    }

    void missed(HostAndPort node, JedisException e) {
      missed++;
      if (firstError == null) {
        firstError = e;
      }
      if (e instanceof JedisRedirectionException
          || (e.getMessage() != null && e.getMessage().startsWith("READONLY"))
          || node == null) {
        nodes.topologyChanged(); // a slot moved or a replica took over
      }
    }

    /** A claim on {@code node}'s key is decided on the run store alone. */
    void decidedAlone(HostAndPort node) {
      if (node != null) {
        decidedAloneByNode.merge(node, 1, Integer::sum);
      }
    }

    /** The request ids of {@code done} markers whose SET was not answered. */
    Set<String> unwritten(Map<String, List<NodeRound.Reply<String>>> done) {
      Set<String> unwritten = new HashSet<>();
      done.forEach(
          (id, replies) -> {
            for (NodeRound.Reply<String> reply : replies) {
              try {
                reply.get();
                answered();
              } catch (JedisException e) {
                missed(reply.node(), e);
                unwritten.add(id);
              }
            }
          });
      return unwritten;
    }

    /**
     * Records the round trip: nodes that failed back off; a round slower than {@code slowAfter}
     * makes the nodes it asked back off too (D42), as one slow Redis did.
     *
     * @throws DedupUnavailableException if nothing was answered
     */
    void settle(NodeRound round, Timer timer, long startNanos) {
      Map<HostAndPort, JedisException> failed = round.failed();
      failed.forEach((node, e) -> health.failed(node, op, e));
      if (!failed.isEmpty()) {
        nodes.topologyChanged();
      }
      decidedAloneByNode.forEach(health::fellBack);
      if (answered == 0 && missed > 0) {
        throw new DedupUnavailableException("redis unavailable during " + op, firstError);
      }
      long took = nanoTime.getAsLong() - startNanos;
      timer.record(took, TimeUnit.NANOSECONDS);
      Set<HostAndPort> answering = round.answered();
      if (took > slowAfterNanos) {
        health.slow(answering, op, took, slowAfterNanos);
        return;
      }
      answering.forEach(health::answered);
    }
  }

  private String key(String requestId) {
    return keyPrefix + requestId;
  }

  @Override
  public void close() {
    syncPool.shutdownNow();
    nodes.close();
  }

  /** Settings of the Redis dedup layer. */
  public record RedisDedupSettings(
      URI uri,
      String keyPrefix,
      Duration claimTtl,
      Duration doneTtl,
      Duration timeout,
      Duration retryBackoff,
      Duration slowAfter,
      Optional<String> username,
      Optional<Secret> password,
      Optional<String> sentinelUsername,
      Optional<Secret> sentinelPassword) {
    public static final String DEFAULT_KEY_PREFIX = "runlane:dedup:";

    /** Credentials, if any, from the URI's user info; slow after half the timeout. */
    public RedisDedupSettings(
        URI uri,
        String keyPrefix,
        Duration claimTtl,
        Duration doneTtl,
        Duration timeout,
        Duration retryBackoff) {
      this(
          uri,
          keyPrefix,
          claimTtl,
          doneTtl,
          timeout,
          retryBackoff,
          timeout.dividedBy(2),
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          Optional.empty());
    }
  }
}
