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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.Response;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * {@link Dedup} on Redis: one pipeline per round trip for the claims ({@code SET NX EX} + {@code
 * GET} per id, which works on Redis 6.2, unlike {@code SET NX GET}) of one or more tasks, led by
 * the done markers they owe; a pipeline of done markers alone; and a compare-and-delete script for
 * releases.
 *
 * <p>After a failure, or an answer slower than {@code slowAfter}, it does not ask Redis again for
 * {@code retryBackoff}, so a dead or crawling Redis costs one timeout per backoff period rather
 * than one per batch; state changes are logged once.
 */
public final class RedisDedup implements Dedup {
  private static final Logger log = LoggerFactory.getLogger(RedisDedup.class);

  private static final String RELEASE_SCRIPT =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

  private final RedisClient client;
  private final String keyPrefix;
  private final SetParams claimParams;
  private final SetParams doneParams;
  private final long retryBackoffNanos;
  private final long slowAfterNanos;
  private final LongSupplier nanoTime;
  private final AtomicBoolean available = new AtomicBoolean(true);
  private final AtomicLong retryAtNanos = new AtomicLong();
  private final Timer claimTimer;
  private final Timer doneTimer;
  private final Timer releaseTimer;
  private final Timer readTimer;

  public RedisDedup(RedisDedupSettings settings, MeterRegistry registry) {
    this(createClient(settings), settings, registry, System::nanoTime);
  }

  RedisDedup(
      RedisClient client, RedisDedupSettings settings, MeterRegistry registry, LongSupplier nano) {
    this.client = client;
    this.keyPrefix = settings.keyPrefix();
    this.claimParams = SetParams.setParams().nx().ex(settings.claimTtl().toSeconds());
    this.doneParams = SetParams.setParams().ex(settings.doneTtl().toSeconds());
    this.retryBackoffNanos = settings.retryBackoff().toNanos();
    this.slowAfterNanos = settings.slowAfter().toNanos();
    this.nanoTime = nano;
    this.claimTimer = DedupMetrics.redisLatency(registry, "claim");
    this.doneTimer = DedupMetrics.redisLatency(registry, "done");
    this.releaseTimer = DedupMetrics.redisLatency(registry, "release");
    this.readTimer = DedupMetrics.redisLatency(registry, "read");
    DedupMetrics.availability(registry, available);
  }

  private static RedisClient createClient(RedisDedupSettings settings) {
    URI uri = settings.uri();
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis((int) settings.timeout().toMillis())
            .socketTimeoutMillis((int) settings.timeout().toMillis())
            .clientName("runlane-processor");
    if ("rediss".equals(uri.getScheme())) {
      // The certificate chain against the JDK's trust store and the host name against the
      // certificate, as for https://: what the deprecated ssl(true) did, through its replacement.
      config.sslOptions(SslOptions.defaults());
    }
    String user = settings.username().orElse(JedisURIHelper.getUser(uri));
    String password =
        settings.password().map(Secret::reveal).orElse(JedisURIHelper.getPassword(uri));
    if (user != null) {
      config.user(user);
    }
    if (password != null) {
      config.password(password);
    }
    if (JedisURIHelper.hasDbIndex(uri)) {
      config.database(JedisURIHelper.getDBIndex(uri));
    }
    return RedisClient.builder()
        .hostAndPort(JedisURIHelper.getHostAndPort(uri))
        .clientConfig(config.build())
        .build();
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
      client.ping();
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
      log.warn(
          "redis not reachable at start (deciding on the run store until it is): {}", e.toString());
    }
  }

  @Override
  public List<Map<String, Claim>> claim(List<ClaimRequest> requests) {
    checkAvailable();
    List<List<Response<String>>> sets = new ArrayList<>(requests.size());
    List<List<Response<String>>> gets = new ArrayList<>(requests.size());
    long start = nanoTime.getAsLong();
    List<Map<String, Claim>> claims = new ArrayList<>(requests.size());
    try (AbstractPipeline pipeline = client.pipelined()) {
      // First, so that a copy of a decided id in this round trip reads done, not our old claim.
      for (ClaimRequest request : requests) {
        setDone(pipeline, request.owner(), request.doneFirst());
      }
      for (ClaimRequest request : requests) {
        List<Response<String>> requestSets = new ArrayList<>(request.events().size());
        List<Response<String>> requestGets = new ArrayList<>(request.events().size());
        for (EventKey event : request.events()) {
          String key = key(event.requestId());
          requestSets.add(
              pipeline.set(
                  key, MarkerValues.processing(request.owner(), event.runId()), claimParams));
          requestGets.add(pipeline.get(key));
        }
        sets.add(requestSets);
        gets.add(requestGets);
      }
      pipeline.sync();
      // Per-command errors (READONLY after a failover, OOM under noeviction) surface in get():
      // they mean "Redis cannot answer" like a dead connection does.
      for (int r = 0; r < requests.size(); r++) {
        ClaimRequest request = requests.get(r);
        Map<String, Claim> requestClaims = new HashMap<>(request.events().size() * 2);
        int i = 0;
        for (EventKey event : request.events()) {
          boolean set = "OK".equals(sets.get(r).get(i).get());
          requestClaims.put(
              event.requestId(),
              set
                  ? Claim.NEW
                  : MarkerValues.read(gets.get(r).get(i).get(), request.owner(), event.runId()));
          i++;
        }
        claims.add(requestClaims);
      }
    } catch (JedisException e) {
      throw unavailable("claim", e);
    }
    answered("claim", claimTimer, start);
    return claims;
  }

  @Override
  public Set<String> takenForOtherRuns(Collection<EventKey> events) {
    if (events.isEmpty()) {
      return Set.of();
    }
    checkAvailable();
    long start = nanoTime.getAsLong();
    List<EventKey> asked = List.copyOf(events);
    List<String> values;
    try {
      values = client.mget(asked.stream().map(e -> key(e.requestId())).toArray(String[]::new));
    } catch (JedisException e) {
      throw unavailable("read", e);
    }
    answered("read", readTimer, start);
    Set<String> taken = new HashSet<>();
    for (int i = 0; i < asked.size(); i++) {
      if (MarkerValues.namesOtherRun(values.get(i), asked.get(i).runId())) {
        taken.add(asked.get(i).requestId());
      }
    }
    return taken;
  }

  @Override
  public void markDone(String owner, Collection<Marker> markers) {
    if (markers.isEmpty()) {
      return;
    }
    checkAvailable();
    long start = nanoTime.getAsLong();
    try (AbstractPipeline pipeline = client.pipelined()) {
      setDone(pipeline, owner, markers);
      pipeline.sync();
    } catch (JedisException e) {
      throw unavailable("done", e);
    }
    answered("done", doneTimer, start);
  }

  @Override
  public void release(String owner, Collection<EventKey> events) {
    if (events.isEmpty()) {
      return;
    }
    checkAvailable();
    long start = nanoTime.getAsLong();
    // EVAL, not EVALSHA: releases are rare, and EVAL cannot fail with NOSCRIPT after a restart.
    try (AbstractPipeline pipeline = client.pipelined()) {
      for (EventKey event : events) {
        pipeline.eval(
            RELEASE_SCRIPT,
            List.of(key(event.requestId())),
            List.of(MarkerValues.processing(owner, event.runId())));
      }
      pipeline.sync();
    } catch (JedisException e) {
      throw unavailable("release", e);
    }
    answered("release", releaseTimer, start);
  }

  private void setDone(AbstractPipeline pipeline, String owner, Collection<Marker> markers) {
    for (Marker marker : markers) {
      EventKey event = marker.event();
      pipeline.set(
          key(event.requestId()),
          MarkerValues.done(owner, event.runId(), marker.stale()),
          doneParams);
    }
  }

  /**
   * Records a round trip that Redis answered. One slower than {@code slowAfter} is used, but the
   * next calls back off as after a failure: a Redis that answers near its timeout would otherwise
   * hold every batch that long, and enough of them in one transaction pass its timeout, abort it
   * and repeat (D42).
   */
  private void answered(String op, Timer timer, long startNanos) {
    long took = nanoTime.getAsLong() - startNanos;
    timer.record(took, TimeUnit.NANOSECONDS);
    if (took > slowAfterNanos) {
      retryAtNanos.set(nanoTime.getAsLong() + retryBackoffNanos);
      if (available.compareAndSet(true, false)) {
        log.warn(
            "redis slow: a {} took {} ms, over REDIS_SLOW_MS={}; deciding on the run store alone"
                + " (degraded) for {} ms before asking again",
            op,
            took / 1_000_000,
            slowAfterNanos / 1_000_000,
            retryBackoffNanos / 1_000_000);
      }
      return;
    }
    recovered();
  }

  private String key(String requestId) {
    return keyPrefix + requestId;
  }

  private void checkAvailable() {
    if (!available.get() && nanoTime.getAsLong() - retryAtNanos.get() < 0) {
      throw new DedupUnavailableException("redis unavailable (backing off)", null);
    }
  }

  private DedupUnavailableException unavailable(String op, JedisException e) {
    retryAtNanos.set(nanoTime.getAsLong() + retryBackoffNanos);
    if (available.compareAndSet(true, false)) {
      log.warn(
          "redis unavailable during {}: deciding on the run store alone (degraded) until it"
              + " answers again: {}",
          op,
          e.toString());
    }
    return new DedupUnavailableException("redis unavailable during " + op, e);
  }

  private void recovered() {
    if (available.compareAndSet(false, true)) {
      log.info("redis available again: dedup claims resumed");
    }
  }

  /** Whether the last call reached Redis. */
  public boolean available() {
    return available.get();
  }

  @Override
  public void close() {
    client.close();
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
      Optional<Secret> password) {
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
          Optional.empty());
    }
  }
}
