package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.MarkerValues;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

/**
 * Two tasks of one stream thread against a real Redis (D45): the first to drain claims for both and
 * writes both tasks' done markers, and the second decides on what that round trip brought.
 */
class SharedRoundTripIT {
  private static final TopicNames TOPICS = TopicNames.defaults();
  private static final Instant T1 = Instant.parse("2026-11-29T10:00:01Z");
  private static final Instant T2 = Instant.parse("2026-11-29T10:00:02Z");
  private static final long START_MS = System.currentTimeMillis();

  @TempDir Path stateDir;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private SharedRoundTrips roundTrips;
  private final List<String> markedDone = new ArrayList<>();

  /** An id whose done marker makes the fault hook throw, as the crash IT's does. */
  private String crashOn = "";

  private String prefix;
  private RedisClient redis;
  private Dedup dedup;
  private Task a;
  private Task b;

  /** One task: its processor, its context, the next input offset. */
  private final class Task {
    final RunEventProcessor processor;
    final MockProcessorContext<String, byte[]> context;
    long offset;

    Task(int partition) {
      this(partition, 100);
    }

    Task(int partition, int batchSize) {
      context =
          TestTopology.context(
              "shared-round-trip", partition, stateDir.resolve("task-" + partition));
      context.setCurrentSystemTimeMs(START_MS); // one clock for the thread's tasks, as in Streams
      TestTopology.stores(context);
      processor =
          new RunEventProcessor(
              new TopologySettings(
                  TOPICS,
                  batchSize,
                  Duration.ofMillis(10),
                  RedisFailureMode.DEGRADE,
                  Duration.ofSeconds(1),
                  4096),
              EnvelopeParser.withDefaults(),
              dedup,
              new ProcessorMetrics(registry),
              ids -> {
                markedDone.addAll(ids);
                if (ids.contains(crashOn)) {
                  throw new IllegalStateException("injected crash after done");
                }
              },
              new FailedAttempts(),
              RedisBudget.unbounded(),
              roundTrips,
              InputReader.NONE);
      processor.init(context);
    }

    void send(String runId, String requestId, Instant createdAt) {
      byte[] body = SumeEvents.event(runId, requestId, createdAt).type("run.updated").bytes();
      context.setRecordMetadata(TOPICS.webhooks(), context.taskId().partition(), offset++);
      processor.process(new Record<>(runId, body, Instant.now().toEpochMilli()));
    }

    void drain() {
      context.scheduledPunctuators().get(0).getPunctuator().punctuate(0);
    }

    int applied() {
      return context.forwarded(ProcessorTopology.EVENTS_SINK).size();
    }
  }

  @BeforeEach
  void setUp() {
    prefix = "test:" + UUID.randomUUID() + ":";
    redis = RedisClient.create(EmbeddedRedis.shared().uri());
    dedup = DecisionTableIT.redisDedup(EmbeddedRedis.shared().uri(), prefix, registry);
    roundTrips = new SharedRoundTrips(dedup);
    a = new Task(0);
    b = new Task(1);
  }

  @AfterEach
  void tearDown() {
    a.processor.close();
    b.processor.close();
    dedup.close();
    redis.close();
  }

  private long roundTrips(String op) {
    var timer = registry.find("runlane.processor.redis.latency").tag("op", op).timer();
    return timer == null ? 0 : timer.count();
  }

  /** A live claim on {@code requestId} by a task on no thread of this test (0_7). */
  private void heldByAnotherTask(String requestId) {
    redis.set(prefix + requestId, "processing:0_7", SetParams.setParams().ex(60));
  }

  @Test
  void theFirstDrainClaimsForBothTasksAndTheSecondDecidesWithoutATrip() {
    a.send("run-a", "ra1", T1);
    b.send("run-b", "rb1", T1);

    a.drain();
    assertThat(roundTrips("claim")).isEqualTo(1);
    assertThat(a.applied()).isEqualTo(1);
    assertThat(redis.get(prefix + "rb1")).isEqualTo(MarkerValues.processing("0_1", "run-b"));
    assertThat(b.applied()).as("b decides at its own drain").isZero();

    b.drain();
    assertThat(b.applied()).isEqualTo(1);
    assertThat(roundTrips("claim")).as("b decided on a's round trip").isEqualTo(1);
    assertThat(roundTrips("done")).isZero();
  }

  @Test
  void bothTasksMarkersRideOnTheNextRoundTrip() {
    a.send("run-a", "ra1", T1);
    b.send("run-b", "rb1", T1);
    a.drain();
    b.drain();

    a.send("run-a", "ra2", T2);
    a.drain();

    assertThat(roundTrips("claim")).isEqualTo(2);
    assertThat(roundTrips("done")).isZero();
    assertThat(redis.get(prefix + "ra1")).isEqualTo(MarkerValues.done("0_0", "run-a", false));
    assertThat(redis.get(prefix + "rb1")).isEqualTo(MarkerValues.done("0_1", "run-b", false));
    assertThat(markedDone).containsExactlyInAnyOrder("ra1", "rb1");
  }

  /**
   * Task a drains first in the pass, owing a marker with nothing parked; b parked since. a's drain
   * writes a's marker on the thread's round trip, which claims rb1 for b: b decides without a trip
   * of its own, and the pass makes one trip where it made two (D104).
   */
  @Test
  void aTaskOwingMarkersWithNothingParkedMakesThePassOneRoundTripForBoth() {
    a.send("run-a", "ra1", T1);
    a.drain(); // decides ra1 on a trip of its own; its marker waits
    b.send("run-b", "rb1", T1);

    a.drain();
    assertThat(redis.get(prefix + "ra1")).isEqualTo(MarkerValues.done("0_0", "run-a", false));
    assertThat(redis.get(prefix + "rb1")).isEqualTo(MarkerValues.processing("0_1", "run-b"));
    b.drain();

    assertThat(b.applied()).isEqualTo(1);
    assertThat(roundTrips("claim")).as("a's first trip and the pass's one").isEqualTo(2);
    assertThat(roundTrips("done")).isZero();
  }

  @Test
  void aCopyParkedAfterItsTwinWasDecidedReadsTheMarkerAheadOfItsClaim() {
    b.send("run-b", "rb1", T1);
    b.drain(); // decides rb1 on a trip of its own; its marker waits
    b.send("run-b", "rb2", T2);
    b.send("run-b", "rb1", T1); // a retry of rb1 after a newer event of its run
    a.send("run-a", "ra1", T1);

    a.drain(); // carries b's marker for rb1 ahead of b's claims
    b.drain();

    assertThat(b.applied()).isEqualTo(2);
    assertThat(b.context.forwarded(ProcessorTopology.STALE_SINK)).isEmpty();
    assertThat(roundTrips("claim")).isEqualTo(2);
  }

  /**
   * Task a's drain, on an event of its own, claims {@code requestId} for {@code peer} (task {@code
   * owner}) on the thread's shared round trip; the peer's drain, where it waits, gives it back.
   */
  private void claimedByAThenGivenBack(Task peer, String owner, String runId, String requestId) {
    a.send("run-a", "ra1", T1);
    a.drain();
    assertThat(redis.get(prefix + requestId)).isEqualTo(MarkerValues.processing(owner, runId));

    peer.drain();

    assertThat(peer.applied()).isZero();
    assertThat(redis.get(prefix + requestId)).as("released").isNull();
  }

  @Test
  void aClaimTakenForAnEventBehindAWaitingOneIsGivenBack() {
    heldByAnotherTask("rb1");
    b.send("run-b", "rb1", T1); // held by another task: waits
    b.send("run-b", "rb2", T2); // waits behind it
    claimedByAThenGivenBack(b, "0_1", "run-b", "rb2");
    assertThat(redis.get(prefix + "rb1")).isEqualTo("processing:0_7");
  }

  /**
   * The run of rb2 is found waiting in the drain's first batch, so rb2, in the second, is never
   * claimed by the drain itself: the claim a peer took for it is given back when the drain ends.
   */
  @Test
  void aClaimLeftUnusedByADrainIsGivenBackAtItsEnd() {
    Task c = new Task(2, 2);
    try {
      heldByAnotherTask("rc1");
      heldByAnotherTask("rx1");
      c.send("run-c", "rc1", T1);
      c.send("run-x", "rx1", T1); // a full batch: drained at once, both wait
      c.send("run-c", "rc2", T2);
      claimedByAThenGivenBack(c, "0_2", "run-c", "rc2");
    } finally {
      c.processor.close();
    }
  }

  @Test
  void closeGivesBackClaimsTakenForTheTaskAndLeavesTheThreadsGroup() {
    b.send("run-b", "rb1", T1);
    a.send("run-a", "ra1", T1);
    a.drain();
    assertThat(redis.get(prefix + "rb1")).isEqualTo(MarkerValues.processing("0_1", "run-b"));

    b.processor.close();

    assertThat(redis.get(prefix + "rb1")).isNull();
    a.send("run-a", "ra2", T2);
    a.drain(); // b left: nothing of b's rides along
    assertThat(roundTrips("claim")).isEqualTo(2);
  }

  /**
   * A crash in the hook for a rider's marker fails the driving task's batch: its fresh claims are
   * given back, as for any failed batch, and the rider's claims stay with the rider.
   */
  @Test
  void aCrashAfterARidersMarkerGivesBackTheDrivingTasksClaims() {
    b.send("run-b", "rb1", T1);
    b.drain(); // rb1 decided on b's own trip; its marker waits
    b.send("run-b", "rb2", T2);
    a.send("run-a", "ra1", T1);
    crashOn = "rb1";

    assertThatThrownBy(a::drain).hasMessageContaining("injected crash");

    assertThat(redis.get(prefix + "rb1")).isEqualTo(MarkerValues.done("0_1", "run-b", false));
    assertThat(redis.get(prefix + "ra1")).as("a's claim given back").isNull();
    assertThat(a.applied()).isZero();
    b.drain();
    assertThat(b.applied()).isEqualTo(2);
    assertThat(roundTrips("claim")).as("b decided rb2 on a's trip").isEqualTo(2);
  }

  @Test
  void aClaimTakenOverABatchIntervalBeforeTheDrainIsAskedAgain() {
    b.send("run-b", "rb1", T1);
    a.send("run-a", "ra1", T1);
    a.drain();
    b.context.setCurrentSystemTimeMs(b.context.currentSystemTimeMs() + 11); // a late drain

    b.drain();

    assertThat(roundTrips("claim")).isEqualTo(2);
    assertThat(b.applied()).as("its own claim reads back as its own").isEqualTo(1);
  }
}
