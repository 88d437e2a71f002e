package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.MarkerValues;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.dedup.RedisDedup.RedisDedupSettings;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * Every cell of the decision table (design.md §6.2), through the real topology (TopologyTestDriver)
 * and a real Redis. Claims of other tasks are written into Redis by hand.
 */
class DecisionTableIT {
  /**
   * The rows whose answer comes from what Redis holds: {@link DecisionTableClusterIT} runs these
   * (and only these) against a Redis Cluster too (issue 41).
   */
  static final Set<Class<?>> REDIS_ROWS =
      Set.of(
          NewToRedis.class,
          StaleByThisTask.class,
          DoneByAnotherTask.class,
          UnknownMarker.class,
          DoneByThisTask.class,
          ProcessingByThisTask.class,
          ProcessingByAnotherTask.class);

  private static final String APP = "decision-table";
  private static final String THIS_TASK = "0_0";
  private static final String OTHER_TASK = "0_7";
  private static final String RUN = "run-1";
  private static final Instant T1 = Instant.parse("2026-11-29T10:00:01Z");
  private static final Instant T2 = Instant.parse("2026-11-29T10:00:02Z");
  private static final Instant T3 = Instant.parse("2026-11-29T10:00:03Z");
  private static final TopicNames TOPICS = TopicNames.defaults();
  private static final int MAX_BODY = 4096;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private String prefix;
  private UnifiedJedis redis;
  private TopologyTestDriver driver;
  private TestInputTopic<String, byte[]> input;
  private TestOutputTopic<String, byte[]> events;
  private TestOutputTopic<String, byte[]> stale;
  private TestOutputTopic<String, byte[]> runs;
  private RedisBudget budget = RedisBudget.unbounded();

  @BeforeEach
  void setUp() {
    prefix = newPrefix();
    redis = newClient();
  }

  /** The Redis the rows run against: the shared one node. */
  URI redisUri() {
    return EmbeddedRedis.shared().uri();
  }

  /** A client to read and write {@link #redisUri()}'s keys by hand. */
  UnifiedJedis newClient() {
    return RedisClient.create(redisUri());
  }

  /** A key prefix of this test's own. */
  String newPrefix() {
    return "test:" + UUID.randomUUID() + ":";
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
    redis.close();
  }

  private void start(URI redisUri) {
    start(redisUri, RedisFailureMode.DEGRADE);
  }

  private void start(URI redisUri, RedisFailureMode mode) {
    start(redisUri, mode, 1);
  }

  /** Batch size 1 decides each event in {@code process()}; larger sizes wait for the punctuator. */
  private void start(URI redisUri, RedisFailureMode mode, int batchSize) {
    start(
        redisUri,
        new TopologySettings(
            TOPICS, batchSize, Duration.ofMillis(10), mode, Duration.ofSeconds(1), MAX_BODY));
  }

  private void start(URI redisUri, TopologySettings settings) {
    Dedup dedup = redisDedup(redisUri, prefix, registry);
    Properties props = TestTopology.streamsProperties(APP);
    driver =
        new TopologyTestDriver(
            ProcessorTopology.build(
                settings,
                dedup,
                new ProcessorMetrics(registry),
                EnvelopeParser.withDefaults(),
                FaultHook.NONE,
                budget),
            props);
    input =
        driver.createInputTopic(
            TOPICS.webhooks(), Serdes.String().serializer(), Serdes.ByteArray().serializer());
    events = output(TOPICS.events());
    stale = output(TOPICS.stale());
    runs = output(TOPICS.runs());
  }

  private void start() {
    start(redisUri());
  }

  /** The dedup layer these tests use: 60 s claims, 24 h done markers, 3 s timeout. */
  static Dedup redisDedup(URI redisUri, String prefix, MeterRegistry registry) {
    // These tests assert which layer decided and how many round trips were made; a busy build
    // machine that slows one answer past 250 ms would send a batch to the run store (D42), so an
    // answer counts as slow only after 1.5 s here. A Redis that is down refuses at once anyway.
    return new RedisDedup(
        new RedisDedupSettings(
            redisUri,
            prefix,
            Duration.ofSeconds(60),
            Duration.ofHours(24),
            Duration.ofSeconds(3),
            Duration.ofSeconds(1)),
        registry);
  }

  private TestOutputTopic<String, byte[]> output(String topic) {
    return driver.createOutputTopic(
        topic, Serdes.String().deserializer(), Serdes.ByteArray().deserializer());
  }

  private void send(String requestId, Instant createdAt) {
    send(RUN, requestId, createdAt);
  }

  private void send(String runId, String requestId, Instant createdAt) {
    send(runId, requestId, createdAt, Instant.now());
  }

  /** Sends {@code requestId} received at {@code arrival} (its record's timestamp). */
  private void send(String runId, String requestId, Instant createdAt, Instant arrival) {
    byte[] body =
        SumeEvents.event(runId, requestId, createdAt)
            .type("run.updated")
            .data("at", createdAt.toString())
            .bytes();
    RecordHeaders headers = new RecordHeaders();
    headers.add(
        "received_at", Long.toString(arrival.toEpochMilli()).getBytes(StandardCharsets.UTF_8));
    input.pipeInput(new TestRecord<>(runId, body, headers, arrival));
  }

  private void redisHolds(String requestId, String value) {
    redis.set(prefix + requestId, value, SetParams.setParams().ex(60));
  }

  private RunState runState() {
    List<byte[]> states = runs.readValuesToList();
    assertThat(states).isNotEmpty();
    return RunStateJson.fromJson(states.get(states.size() - 1));
  }

  private double count(String outcome, String layer) {
    var counter =
        registry
            .find(ProcessorMetrics.EVENTS)
            .tag("outcome", outcome)
            .tag("layer", layer)
            .counter();
    return counter == null ? 0 : counter.count();
  }

  /**
   * Applies {@code requestId} at {@code createdAt} so the run store holds it as the last event, and
   * lets the next punctuation write its done marker.
   */
  private void applied(String requestId, Instant createdAt) {
    send(requestId, createdAt);
    assertThat(events.readValuesToList()).hasSize(1);
    runs.readValuesToList();
    driver.advanceWallClockTime(Duration.ofMillis(10));
  }

  /**
   * Starts the topology with {@code requestId} at {@code createdAt} applied; see {@link #applied}.
   */
  private void startAfter(String requestId, Instant createdAt) {
    start();
    applied(requestId, createdAt);
  }

  /** Sends r1 at T1 with Redis holding {@code marker} for it. */
  private void r1Meets(String marker) {
    redisHolds("r1", marker);
    send("r1", T1);
  }

  /** Nothing was applied, and one event was decided a duplicate on {@code layer}. */
  private void assertDuplicate(String layer) {
    assertThat(events.isEmpty()).isTrue();
    assertThat(count("duplicate", layer)).isEqualTo(1);
  }

  /** One event was decided stale on the run store, and listed on the stale topic. */
  private void assertStale() {
    assertThat(stale.readValuesToList()).hasSize(1);
    assertThat(count("stale", "store")).isEqualTo(1);
  }

  private long roundTrips(String op) {
    var timer = registry.find("runlane.processor.redis.latency").tag("op", op).timer();
    return timer == null ? 0 : timer.count();
  }

  @Nested
  class NewToRedis {
    @Test
    void newerIsApplied() {
      start();
      send("r1", T1);
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(runState().lastRequestId()).isEqualTo("r1");
      assertThat(count("applied", "store")).isEqualTo(1);
      // The done marker rides on the next batch's claims, or goes alone at the next drain (D22).
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.processing(THIS_TASK, RUN));
      driver.advanceWallClockTime(Duration.ofMillis(10));
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
    }

    @Test
    void eachBatchsDoneMarkersRideOnTheNextBatchsClaims() {
      start();
      send("r1", T1);
      send("r2", T2);
      send("r3", T3);
      assertThat(events.readValuesToList()).hasSize(3);
      assertThat(roundTrips("claim")).isEqualTo(3);
      assertThat(roundTrips("done")).isZero();
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
      assertThat(redis.get(prefix + "r2")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
      assertThat(redis.get(prefix + "r3")).isEqualTo(MarkerValues.processing(THIS_TASK, RUN));

      // A drain with nothing to claim: the markers go on a round trip of the thread's, which
      // would claim what other tasks parked too (D104).
      driver.advanceWallClockTime(Duration.ofMillis(10));
      assertThat(roundTrips("claim")).isEqualTo(4);
      assertThat(roundTrips("done")).isZero();
      assertThat(redis.get(prefix + "r3")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
      driver.advanceWallClockTime(Duration.ofMillis(10));
      assertThat(roundTrips("claim")).as("nothing left to write").isEqualTo(4);
    }

    /**
     * The markers go ahead of the claims in the pipeline: a copy of an id decided in the batch
     * before reads {@code done}, not this task's old claim, which the store would call stale once
     * the run has moved on.
     */
    @Test
    void aCopyInTheNextBatchReadsTheMarkerWrittenAheadOfItsClaim() {
      start(redisUri(), RedisFailureMode.DEGRADE, 2);
      send("r1", T1);
      driver.advanceWallClockTime(Duration.ofMillis(10)); // decides r1; its marker waits
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.processing(THIS_TASK, RUN));
      send("r2", T2);
      send("r1", T1); // a retry of r1, after a newer event of the run: one batch of two
      assertThat(events.readValuesToList()).hasSize(2);
      assertThat(stale.isEmpty()).isTrue();
      assertThat(count("duplicate", "redis")).isEqualTo(1);
      assertThat(roundTrips("claim")).isEqualTo(2);
      assertThat(roundTrips("done")).isZero();
    }

    @Test
    void theLastDoneMarkersAreWrittenWhenTheTaskCloses() {
      start();
      send("r1", T1);
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.processing(THIS_TASK, RUN));
      driver.close();
      driver = null;
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
    }

    @Test
    void sameAsLastIsADuplicateCaughtByTheStore() {
      startAfter("r1", T1);
      redis.del(prefix + "r1"); // Redis lost the key
      send("r1", T1);
      assertDuplicate("store");
    }

    @Test
    void olderIsStale() {
      startAfter("r2", T2);
      send("r1", T1);
      assertThat(events.isEmpty()).isTrue();
      var staleRecord = stale.readRecord();
      assertThat(
              new String(
                  staleRecord.headers().lastHeader("stale.last_request_id").value(),
                  StandardCharsets.UTF_8))
          .isEqualTo("r2");
      assertThat(count("stale", "store")).isEqualTo(1);
      // Its marker says it was decided stale, so that after an abort it is listed again (D40).
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, true));
    }
  }

  @Nested
  class StaleByThisTask {
    @Test
    void olderIsListedStaleAgainBecauseTheEarlierAttemptMayHaveAborted() {
      startAfter("r2", T2);
      r1Meets("done:" + THIS_TASK + ":stale");
      assertStale();
      assertThat(events.isEmpty()).isTrue();
    }

    @Test
    void newerIsAppliedBecauseTheEarlierAttemptAbortedWithTheStateItWasStaleAgainst() {
      start();
      r1Meets("done:" + THIS_TASK + ":stale");
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(count("applied", "store")).isEqualTo(1);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
    }

    @Test
    void anotherTasksStaleMarkerIsADuplicateCaughtByRedis() {
      start();
      r1Meets("done:" + OTHER_TASK + ":stale");
      assertThat(events.isEmpty()).isTrue();
      assertThat(stale.isEmpty()).isTrue();
      assertThat(count("duplicate", "redis")).isEqualTo(1);
    }
  }

  @Nested
  class DoneByAnotherTask {
    @Test
    void newerIsADuplicateCaughtByRedis() {
      start();
      r1Meets("done:" + OTHER_TASK);
      assertDuplicate("redis");
      assertThat(runs.isEmpty()).isTrue();
      assertThat(redis.get(prefix + "r1")).isEqualTo("done:" + OTHER_TASK);
    }

    @Test
    void sameIsADuplicateCaughtByRedis() {
      startAfter("r1", T1);
      r1Meets("done:" + OTHER_TASK);
      assertDuplicate("redis");
    }

    @Test
    void olderIsADuplicateCaughtByRedis() {
      startAfter("r2", T2);
      r1Meets("done:" + OTHER_TASK);
      assertThat(stale.isEmpty()).isTrue();
      assertThat(count("duplicate", "redis")).isEqualTo(1);
    }
  }

  @Nested
  class UnknownMarker {
    @Test
    void aValueThatIsNoMarkerIsDecidedOnTheStoreCountedAndLeftAlone() {
      start();
      redisHolds("r1", "v0|r1|applied"); // an older format, or another deployment's
      send("r1", T1);
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(registry.find(ProcessorMetrics.UNKNOWN_MARKERS).counter().count()).isEqualTo(1);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(redis.get(prefix + "r1")).isEqualTo("v0|r1|applied");
    }

    @Test
    void olderThatWasAppliedIsADuplicateCaughtByTheStoreNotStale() {
      startAfter("r1", T1);
      applied("r2", T2);
      r1Meets("v0|r1|applied");
      assertDuplicate("store");
      assertThat(stale.isEmpty()).isTrue();
    }

    @Test
    void olderNeverAppliedIsStale() {
      startAfter("r2", T2);
      r1Meets("v0|r1|applied");
      assertStale();
    }
  }

  @Nested
  class DoneByThisTask {
    /**
     * Each copy decided on this task's marker writes the marker again with a fresh TTL, and the
     * record keeps the id as long: a copy arriving more than the horizon after the first, within it
     * of the last, is still a duplicate, never listed stale (D68). Record times here, 24 h horizon.
     */
    @Test
    void aCopyIsRecordedAgainAsItsMarkerIsWrittenAgain() {
      Instant now = Instant.now();
      start();
      send(RUN, "r1", T1, now.minus(Duration.ofHours(30)));
      send(RUN, "r2", T2, now.minus(Duration.ofHours(30)).plusMillis(1));
      assertThat(events.readValuesToList()).hasSize(2);
      driver.advanceWallClockTime(Duration.ofMillis(10)); // the done markers of r1 and r2
      send(RUN, "r1", T1, now.minus(Duration.ofHours(10))); // a copy: a duplicate, marked again
      driver.advanceWallClockTime(Duration.ofMillis(10));
      send(RUN, "r1", T1, now); // 30 h after r1 was applied, 10 h after its last copy
      assertThat(stale.readValuesToList()).as("r1 was applied: never listed stale").isEmpty();
      assertThat(count("duplicate", "redis")).isEqualTo(2);
    }

    @Test
    void newerIsAppliedBecauseTheEarlierAttemptAborted() {
      start();
      r1Meets("done:" + THIS_TASK);
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(runState().appliedCount()).isEqualTo(1);
      assertThat(count("applied", "store")).isEqualTo(1);
    }

    @Test
    void sameIsADuplicateCaughtByRedis() {
      startAfter("r1", T1); // leaves done:<this task>
      send("r1", T1);
      assertDuplicate("redis");
    }

    @Test
    void olderIsADuplicateCaughtByRedisWhenTheTasksRecordHasIt() {
      startAfter("r1", T1); // leaves done:<this task>
      applied("r2", T2);
      send("r1", T1);
      assertDuplicate("redis");
      assertThat(stale.isEmpty()).isTrue();
    }

    /**
     * The marker outlived an aborted attempt, and a newer event was applied since: the task's
     * record never saw r1 decided, so r1 is listed stale, not dropped as a copy of itself (D68).
     */
    @Test
    void olderThatTheTasksRecordNeverSawIsStaleNotDropped() {
      startAfter("r2", T2);
      r1Meets("done:" + THIS_TASK);
      assertStale();
    }
  }

  @Nested
  class ProcessingByThisTask {
    @Test
    void newerIsAppliedTakingOverTheDeadAttempt() {
      start();
      r1Meets("processing:" + THIS_TASK);
      assertThat(events.readValuesToList()).hasSize(1);
      driver.advanceWallClockTime(Duration.ofMillis(10));
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
    }

    @Test
    void sameIsADuplicateCaughtByTheStore() {
      startAfter("r1", T1);
      r1Meets("processing:" + THIS_TASK);
      assertDuplicate("store");
    }

    @Test
    void olderIsStale() {
      startAfter("r2", T2);
      r1Meets("processing:" + THIS_TASK);
      assertStale();
    }
  }

  @Nested
  class ProcessingByAnotherTask {
    @Test
    void waitsUntilTheClaimIsGoneThenDecidesAgain() {
      start();
      r1Meets("processing:" + OTHER_TASK);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(events.isEmpty()).isTrue();
      assertThat(runs.isEmpty()).isTrue();

      redis.del(prefix + "r1"); // the other task's claim expires
      driver.advanceWallClockTime(Duration.ofMillis(50));

      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(runState().lastRequestId()).isEqualTo("r1");
    }

    @Test
    void decidesDuplicateWhenTheOtherTaskFinishes() {
      start();
      r1Meets("processing:" + OTHER_TASK);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      redisHolds("r1", "done:" + OTHER_TASK);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertDuplicate("redis");
    }

    @Test
    void laterEventsOfTheSameRunWaitBehindIt() {
      start();
      r1Meets("processing:" + OTHER_TASK);
      send("r2", T2);
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(events.isEmpty()).isTrue();
      redis.del(prefix + "r1");
      driver.advanceWallClockTime(Duration.ofMillis(50));
      assertThat(runs.readValuesToList()).hasSize(2);
    }
  }

  /** A stream thread whose transaction has spent its Redis time (D42). */
  @Nested
  class RedisBudgetSpent {
    @Test
    void degradeModeDecidesOnTheStoreAloneWithoutAskingRedis() {
      budget = RedisBudget.perTransaction(Duration.ZERO);
      start();
      send("r1", T1);
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(registry.find(ProcessorMetrics.DEGRADED).counter().count()).isEqualTo(1);
      assertThat(registry.find(ProcessorMetrics.REDIS_BUDGET_SPENT).counter().count()).isEqualTo(1);
      assertThat(redis.get(prefix + "r1")).as("Redis was not asked").isNull();
    }

    @Test
    void blockModeLeavesTheEventParkedUntilTheNextTransaction() {
      budget = RedisBudget.perTransaction(Duration.ofNanos(1)); // spent by the first round trip
      start(redisUri(), RedisFailureMode.BLOCK);
      send("r1", T1);
      assertThat(events.readValuesToList()).hasSize(1);
      send("r2", T2);
      assertThat(events.isEmpty()).as("parked, not decided").isTrue();
      assertThat(registry.find(ProcessorMetrics.REDIS_BUDGET_SPENT).counter().count()).isEqualTo(1);
      budget.transactionEnded(); // what the stream thread's producer does at a commit
      driver.advanceWallClockTime(Duration.ofMillis(10));
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(runState().lastRequestId()).isEqualTo("r2");
    }
  }

  /** Block mode keeps a bounded pending store while Redis stays away (issue 36). */
  @Test
  void blockModeStopsReadingOnceATaskKeepsItsMostParkedEvents() {
    budget = RedisBudget.perTransaction(Duration.ofNanos(1)); // spent by the first round trip
    start(redisUri(), RedisFailureMode.BLOCK);
    send("r0", T1);
    int most = RunEventProcessor.MAX_PARKED_BATCHES; // batch size 1
    for (int i = 1; i < most; i++) {
      send("run-" + i, "r" + i, T2);
    }
    assertThat(events.readValuesToList()).as("r0 only: the rest parked").hasSize(1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> send("run-last", "r-last", T2))
        .hasStackTraceContaining("parked waiting for Redis (block mode)");
  }

  @Nested
  class RedisUnavailable {
    // Nothing listens on port 1: a real, refused connection.
    private final URI dead = URI.create("redis://127.0.0.1:1");

    @Test
    void newerIsAppliedDegraded() {
      start(dead);
      send("r1", T1);
      assertThat(events.readValuesToList()).hasSize(1);
      assertThat(registry.find(ProcessorMetrics.DEGRADED).counter().count()).isEqualTo(1);
    }

    @Test
    void sameIsADuplicateCaughtByTheStore() {
      start(dead);
      applied("r1", T1);
      send("r1", T1);
      assertDuplicate("store");
    }

    @Test
    void blockModeHoldsTheEventThenFailsTheThreadAfterItsTimeout() {
      start(dead, RedisFailureMode.BLOCK);
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> send("r1", T1))
          .hasStackTraceContaining("redis unavailable during claim")
          .hasStackTraceContaining("REDIS_BLOCK_TIMEOUT_SECONDS");
      assertThat(events.isEmpty()).isTrue();
      assertThat(runs.isEmpty()).isTrue();
    }

    @Test
    void olderIsStale() {
      start(dead);
      applied("r2", T2);
      send("r1", T1);
      assertStale();
    }

    /** Without Redis, the task's record of decided ids tells a copy from a late event (D68). */
    @Test
    void olderThatWasAppliedIsADuplicateCaughtByTheStoreNotStale() {
      start(dead);
      applied("r1", T1);
      applied("r2", T2);
      send("r1", T1);
      assertDuplicate("store");
      assertThat(stale.isEmpty()).isTrue();
    }

    @Test
    void aCopyOnAnotherRunIsDeadLetteredReusedAsWithRedis() {
      start(dead);
      applied("r1", T1);
      TestOutputTopic<String, byte[]> dlq = output(TOPICS.dlq());
      send("run-2", "r1", T2);
      assertThat(events.isEmpty()).isTrue();
      assertThat(
              new String(
                  dlq.readRecord().headers().lastHeader("dlq.reason").value(),
                  StandardCharsets.UTF_8))
          .isEqualTo("request_id_reused");
      assertThat(count("reused", "store")).isEqualTo(1);
    }

    /** A marker that could not ride on a claim during an outage is written once Redis is back. */
    @Test
    void queuedDoneMarkersWaitOutAnOutage() {
      try (EmbeddedRedis owned = EmbeddedRedis.startOwned()) {
        start(owned.uri());
        send("r1", T1); // applied; its marker waits for the next batch
        owned.stop();
        send("r2", T2); // decided on the run store: the claims, and the marker with them, fail
        assertThat(events.readValuesToList()).hasSize(2);
        assertThat(registry.find(ProcessorMetrics.DEGRADED).counter().count()).isEqualTo(1);
        owned.restart(); // empty
        try (RedisClient ownedClient = RedisClient.create(owned.uri())) {
          // Each drain retries once the dedup's 1 s back-off is over.
          org.awaitility.Awaitility.await()
              .atMost(Duration.ofSeconds(10))
              .untilAsserted(
                  () -> {
                    driver.advanceWallClockTime(Duration.ofMillis(10));
                    assertThat(ownedClient.get(prefix + "r1"))
                        .isEqualTo(MarkerValues.done(THIS_TASK, RUN, false));
                  });
          assertThat(ownedClient.get(prefix + "r2")).as("decided without a claim").isNull();
        }
      }
    }
  }

  @Test
  void aBodyOverTheLimitIsDeadLetteredByReferenceNotRetried() {
    start();
    TestOutputTopic<String, byte[]> dlq = output(TOPICS.dlq());
    byte[] big =
        ("{\"request_id\":\"r1\",\"pad\":\"" + "x".repeat(MAX_BODY) + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    input.pipeInput("run-1", big);

    var record = dlq.readRecord();
    assertThat(record.value()).isNull();
    assertThat(
            new String(record.headers().lastHeader("dlq.reason").value(), StandardCharsets.UTF_8))
        .isEqualTo("too_large");
    assertThat(
            new String(record.headers().lastHeader("dlq.detail").value(), StandardCharsets.UTF_8))
        .contains(TOPICS.webhooks() + "-0@0");
    assertThat(events.isEmpty()).isTrue();
    assertThat(count("invalid", "decode")).isEqualTo(1);
  }

  /** A record an ingress without the storage limits accepted: never applied, dead-lettered. */
  @Test
  void anEnvelopeWithNulInItsTypeIsDeadLetteredNotApplied() {
    start();
    TestOutputTopic<String, byte[]> dlq = output(TOPICS.dlq());
    byte[] body = SumeEvents.event(RUN, "r1", T1).type("run.x\0y").bytes();
    input.pipeInput(RUN, body);

    var record = dlq.readRecord();
    assertThat(record.value()).isEqualTo(body);
    assertThat(
            new String(record.headers().lastHeader("dlq.reason").value(), StandardCharsets.UTF_8))
        .isEqualTo("unstorable_field");
    assertThat(events.isEmpty()).isTrue();
    assertThat(count("invalid", "decode")).isEqualTo(1);
  }

  @Test
  void aCopyInTheSameBatchIsADuplicateNotStale() {
    start(redisUri(), RedisFailureMode.DEGRADE, 100);
    send("r3", T3);
    send("r1", T1);
    send("r1", T1);
    assertThat(events.isEmpty()).isTrue();

    driver.advanceWallClockTime(Duration.ofMillis(20));

    assertThat(events.readValuesToList()).hasSize(1);
    assertThat(stale.readValuesToList()).hasSize(1);
    assertThat(count("duplicate", "redis")).isEqualTo(1);
  }

  /**
   * A replaying generation decides records an earlier generation may have decided on its run store
   * alone (D35); its record of decided ids tells a copy from a late event there too (D68).
   */
  @Nested
  class Replayed {
    /** Generation 1, re-deciding partition 0's first 100 offsets unasked and emitting them. */
    private void startReplaying() {
      Replay replay =
          new Replay("replay-1", null, Map.of(), Map.of(0, 0L), Map.of(0, 100L), Map.of());
      start(
          EmbeddedRedis.shared().uri(),
          new TopologySettings(
              TOPICS,
              1,
              Duration.ofMillis(10),
              RedisFailureMode.DEGRADE,
              Duration.ofSeconds(1),
              MAX_BODY,
              "g1-",
              replay,
              Duration.ZERO,
              ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
              TopologySettings.DEFAULT_DECIDED_HORIZON));
    }

    @Test
    void olderThatWasAppliedIsADuplicateCaughtByTheStoreNotStale() {
      startReplaying();
      applied("r1", T1);
      applied("r2", T2);
      r1Meets(MarkerValues.done(OTHER_TASK, RUN, false)); // never asked
      assertDuplicate("store");
      assertThat(stale.isEmpty()).isTrue();
    }

    /**
     * Live, the copy on run-1 met the marker run-0's event left and was dead-lettered: re-derived,
     * it is dead-lettered again, though no task of this partition ever saw run-0 (D70).
     */
    @Test
    void aCopyWhoseMarkerNamesAnotherRunIsReusedAsLive() {
      startReplaying();
      TestOutputTopic<String, byte[]> dlq = output(TOPICS.dlq());
      r1Meets(MarkerValues.done(OTHER_TASK, "run-0", false));
      assertThat(events.isEmpty()).isTrue();
      assertThat(
              new String(
                  dlq.readRecord().headers().lastHeader("dlq.reason").value(),
                  StandardCharsets.UTF_8))
          .isEqualTo("request_id_reused");
      assertThat(redis.get(prefix + "r1")).isEqualTo(MarkerValues.done(OTHER_TASK, "run-0", false));
    }

    @Test
    void olderNeverAppliedIsStale() {
      startReplaying();
      applied("r2", T2);
      send("r1", T1);
      assertStale();
    }
  }
}
