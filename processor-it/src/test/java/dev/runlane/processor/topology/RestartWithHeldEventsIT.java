package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.MarkerValues;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

/**
 * A task that restarts with events held by its reorder window, as a deterministic interleaving of
 * the crash design.md §6.2 is built for: done markers written, the transaction aborted (issue 36,
 * item 2). The restart is a second processor over the first one's stores, with the wall clock
 * driven by the test and a real Redis.
 */
class RestartWithHeldEventsIT {
  private static final TopicNames TOPICS = TopicNames.defaults();
  private static final TopicPartition INPUT = new TopicPartition(TOPICS.webhooks(), 0);
  private static final long T0 = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
  private static final Instant CREATED = Instant.parse("2026-12-01T09:00:00Z");
  private static final long W = 1_000;

  @TempDir Path stateDir;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Map<Long, ConsumerRecord<byte[], byte[]>> input = new HashMap<>();
  private final List<String> applied = new ArrayList<>();
  private final List<String> listed = new ArrayList<>(); // stale or dead-lettered
  private List<StateStore> stores = List.of();
  private TopologySettings settings;
  private Dedup dedup;
  private RedisClient redis;
  private String prefix;
  private MockProcessorContext<String, byte[]> context;
  private RunEventProcessor processor;
  private long wallClockMs = 50_000;

  /** The task's stream time: the latest record timestamp it read, kept across the restart. */
  private long streamTimeMs;

  /** The input as the restarted task finds it: the offset of its last record the commit missed. */
  private long lastUncommitted = -1;

  @BeforeEach
  void setUp() {
    prefix = "test:" + UUID.randomUUID() + ":";
    redis = RedisClient.create(EmbeddedRedis.shared().uri());
    dedup = DecisionTableIT.redisDedup(EmbeddedRedis.shared().uri(), prefix, registry);
    settings = TestTopology.windowed(256, Duration.ofMillis(10), Duration.ofMillis(W));
  }

  @AfterEach
  void tearDown() throws Exception {
    if (processor != null) {
      processor.close();
    }
    dedup.close();
    redis.close();
  }

  @Test
  void theIdleClockWaitsForTheUncommittedTailSoNoAbortedDecisionIsDroppedAsADuplicate() {
    start();
    firstLifeHoldsE2AndU1();
    // Then e1, between e0 and e2, is read, held, released with e2 and marked done in Redis, and
    // the process dies before its transaction commits: the stores and outputs roll back to the
    // commit, Redis keeps e1's done marker.
    record(3, "run-1", "e1", 1, T0 + 200);
    e1MarkedDoneBeforeTheCrash();
    lastUncommitted = 3;
    processor.close();

    // The second life, with e2 and u1 restored. Its first drains come before e1 is read again
    // (the first fetch is slow): 2 s of idle clock, well past the window.
    start();
    drainForIdleSteps(10);
    readAgain(3);
    drainForIdleSteps(10);

    assertThat(listed).as("e1 was applied before the crash").isEmpty();
    assertThat(applied)
        .as("every event applied once, each run in order: e1 is not dropped as a duplicate")
        .containsExactly("run-1/e0", "run-1/e1", "run-1/e2", "run-2/u1");
  }

  /**
   * The cap on held events waits for the tail too (review of D67): where drains fall decides a cap
   * release, and a restart moves them. The first life read x1, x2 and e1 before one drain, so the
   * cap of two released e1 with e2, in order, wrote e1's done marker and crashed. The second life's
   * first fetch returns x1 and x2 alone; had its drain released e2 by the cap before e1 was read
   * again, e1 would meet its own aborted marker, older than e2, with the record not yet covering
   * (an upgrade): dropped as a duplicate.
   */
  @Test
  void theCapDoesNotReleaseAheadOfTheUncommittedTail() {
    wallClockMs = T0 + 5_000; // the wall clock and the record times agree, as in production
    settings = capped(Duration.ZERO); // the version before the record: the upgrade
    start();
    firstLifeHoldsE2AndU1();
    record(3, "run-3", "x1", 1, T0 + W + 10);
    record(4, "run-4", "x2", 1, T0 + W + 20);
    record(5, "run-1", "e1", 1, T0 + W + 30);
    e1MarkedDoneBeforeTheCrash();
    lastUncommitted = 5;
    processor.close();

    settings = capped(TopologySettings.DEFAULT_DECIDED_HORIZON);
    start();
    readAgain(3);
    readAgain(4);
    drain();
    readAgain(5);
    drainForIdleSteps(10);

    assertThat(listed).as("e1 was applied before the crash").isEmpty();
    assertThat(applied)
        .as("e1 applied in its run's order, not dropped")
        .containsSubsequence("run-1/e0", "run-1/e1", "run-1/e2");
  }

  /**
   * The first life: e0 and e2 of run-1 are held; u1 of run-2, read a window after e0, releases e0.
   * All three are committed: e2 and u1 are still held.
   */
  private void firstLifeHoldsE2AndU1() {
    read(0, "run-1", "e0", 0, T0);
    read(1, "run-1", "e2", 2, T0 + 100);
    drain();
    read(2, "run-2", "u1", 1, T0 + W);
    drain();
    assertThat(applied).containsExactly("run-1/e0");
  }

  /** e1 was decided and its done marker written, then the process died before its commit. */
  private void e1MarkedDoneBeforeTheCrash() {
    redis.set(
        prefix + "e1", MarkerValues.done("0_0", "run-1", false), SetParams.setParams().ex(60));
  }

  /** A window of {@link #W} holding at most two events, with the record's {@code horizon}. */
  private static TopologySettings capped(Duration horizon) {
    return new TopologySettings(
        TOPICS,
        256,
        Duration.ofMillis(10),
        RedisFailureMode.DEGRADE,
        Duration.ofSeconds(1),
        4096,
        "",
        null,
        Duration.ofMillis(W),
        2,
        horizon);
  }

  private void start() {
    context = TestTopology.context("restart-with-held", 0, stateDir);
    context.setCurrentSystemTimeMs(wallClockMs);
    context.setCurrentStreamTimeMs(streamTimeMs);
    if (stores.isEmpty()) {
      stores = TestTopology.stores(context);
    } else {
      TestTopology.addTo(context, stores);
    }
    processor =
        new RunEventProcessor(
            settings,
            EnvelopeParser.withDefaults(),
            dedup,
            new ProcessorMetrics(registry),
            FaultHook.NONE,
            new FailedAttempts(),
            RedisBudget.unbounded(),
            new SharedRoundTrips(dedup),
            new Input());
    processor.init(context);
  }

  /** Writes an event to the input at {@code offset} and has the task read it. */
  private void read(long offset, String runId, String requestId, int second, long arrivedMs) {
    record(offset, runId, requestId, second, arrivedMs);
    readAgain(offset);
  }

  private void record(long offset, String runId, String requestId, int second, long arrivedMs) {
    byte[] body =
        SumeEvents.event(runId, requestId, CREATED.plusSeconds(second)).type("run.updated").bytes();
    input.put(
        offset,
        new ConsumerRecord<>(
            INPUT.topic(),
            INPUT.partition(),
            offset,
            arrivedMs,
            TimestampType.CREATE_TIME,
            -1,
            body.length,
            runId.getBytes(StandardCharsets.UTF_8),
            body,
            new RecordHeaders(),
            Optional.empty()));
  }

  private void readAgain(long offset) {
    ConsumerRecord<byte[], byte[]> r = input.get(offset);
    context.setRecordMetadata(r.topic(), r.partition(), offset);
    streamTimeMs = Math.max(streamTimeMs, r.timestamp());
    context.setCurrentStreamTimeMs(streamTimeMs);
    processor.process(
        new Record<>(
            new String(r.key(), StandardCharsets.UTF_8), r.value(), r.timestamp(), r.headers()));
  }

  /** {@code steps} drains, the wall clock one idle step further after each: 250 ms of idleness. */
  private void drainForIdleSteps(int steps) {
    for (int i = 0; i < steps; i++) {
      drain();
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
  }

  /** Runs the task's drain punctuation at the test's wall clock, and collects the outputs. */
  private void drain() {
    context.setCurrentSystemTimeMs(wallClockMs);
    List<MockProcessorContext.CapturedPunctuator> punctuators = context.scheduledPunctuators();
    punctuators.get(punctuators.size() - 1).getPunctuator().punctuate(wallClockMs);
    for (MockProcessorContext.CapturedForward<? extends String, ? extends byte[]> f :
        context.forwarded()) {
      String childName = f.childName().orElseThrow();
      if (childName.equals(ProcessorTopology.EVENTS_SINK)) {
        applied.add(f.record().key() + "/" + requestId(f.record().value()));
      } else if (childName.equals(ProcessorTopology.STALE_SINK)
          || childName.equals(ProcessorTopology.DLQ_SINK)) {
        listed.add(f.record().key() + "/" + requestId(f.record().value()));
      }
    }
    context.resetForwards();
  }

  private static String requestId(byte[] body) {
    try {
      return EnvelopeParser.withDefaults().parse(body).requestId();
    } catch (EnvelopeException e) {
      throw new AssertionError("the processor forwarded a body that is no event", e);
    }
  }

  /** The input topic as the test wrote it. */
  private final class Input implements InputReader {
    @Override
    public Map<Long, ConsumerRecord<byte[], byte[]>> read(
        TopicPartition partition, SortedSet<Long> offsets) {
      Map<Long, ConsumerRecord<byte[], byte[]>> found = new HashMap<>();
      offsets.forEach(o -> found.put(o, input.get(o)));
      return found;
    }

    @Override
    public OptionalLong lastUncommitted(TopicPartition partition, String applicationId) {
      return lastUncommitted < 0 ? OptionalLong.empty() : OptionalLong.of(lastUncommitted);
    }
  }
}
