package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The decision log (D86): one record per input record, keyed by run, naming its input, outcome,
 * layer and output; a held event's release is a second record of its input; off, no sink at all.
 */
class DecisionLogTest {
  private static final TopicNames TOPICS = TopicNames.defaults();
  private static final String LOG = "sume.decisions";
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private static final long T0_MS = T0.toEpochMilli();

  @Test
  void offTheTopologyHasNoDecisionSink() {
    assertThat(topology(null, Duration.ZERO).describe().toString())
        .doesNotContain(LOG)
        .doesNotContain(ProcessorTopology.DECISIONS_SINK);
    assertThat(topology(LOG, Duration.ZERO).describe().toString()).contains(LOG);
  }

  @Test
  void eachInputRecordHasOneDecisionWithItsCoordinatesLayerAndOutput() {
    try (Pipe pipe = new Pipe(Duration.ZERO)) {
      pipe.send(event("run-1", "a", 2, T0_MS)); // 0: applied
      pipe.send(event("run-1", "a", 2, T0_MS + 1)); // 1: a copy in the same batch
      pipe.send(event("run-1", "b", 1, T0_MS + 2)); // 2: older than a: stale
      pipe.send(event("run-2", "a", 3, T0_MS + 3)); // 3: a's id on another run: reused
      pipe.send(garbage("run-3", T0_MS + 4)); // 4: no envelope: invalid
      pipe.drain();
      pipe.send(event("run-1", "a", 2, T0_MS + 5)); // 5: a retry: the run store's head
      pipe.drain();
      List<Decision> d = pipe.decisions();
      assertThat(d)
          .extracting(Decision::inputOffset, x -> x.outcome().tag(), Decision::layer)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(4L, "invalid", "intake"),
              org.assertj.core.groups.Tuple.tuple(0L, "applied", "store"),
              org.assertj.core.groups.Tuple.tuple(1L, "duplicate", "record"),
              org.assertj.core.groups.Tuple.tuple(2L, "stale", "store"),
              org.assertj.core.groups.Tuple.tuple(3L, "reused", "redis"),
              org.assertj.core.groups.Tuple.tuple(5L, "duplicate", "record"));
      Decision applied = d.get(1);
      assertThat(applied.requestId()).isEqualTo("a");
      assertThat(applied.runId()).isEqualTo("run-1");
      assertThat(applied.input()).isEqualTo(TOPICS.webhooks() + "/0/0");
      assertThat(applied.generation()).isZero();
      assertThat(applied.replay()).isNull();
      assertThat(applied.output()).isEqualTo(TOPICS.events());
      assertThat(applied.receivedAt()).isEqualTo(T0_MS - 100);
      assertThat(applied.decidedAt()).isPositive();
      assertThat(d.get(3).output()).isEqualTo(TOPICS.stale());
      assertThat(d.get(4).output()).isEqualTo(TOPICS.dlq());
      assertThat(d.get(4).reason()).isEqualTo("request_id_reused");
      assertThat(d.get(0).reason()).isEqualTo("not_json");
      assertThat(d.get(0).output()).isEqualTo(TOPICS.dlq());
      assertThat(d.get(2).output()).isNull();
      assertThat(pipe.decisionKeys())
          .containsExactly("run-3", "run-1", "run-1", "run-1", "run-2", "run-1");
    }
  }

  @Test
  void aHeldEventIsDecidedHeldThenReleasedAndACopyOfItADuplicate() {
    try (Pipe pipe = new Pipe(Duration.ofSeconds(1))) {
      pipe.send(event("run-1", "t2", 2, T0_MS)); // 0: held
      pipe.send(event("run-1", "t1", 1, T0_MS + 100)); // 1: held, applied first
      pipe.drain();
      pipe.send(event("run-1", "t2", 2, T0_MS + 200)); // 2: a copy of a held event
      pipe.drain();
      pipe.send(event("run-2", "u1", 1, T0_MS + 1_500)); // 3: releases t1 and t2 as read
      pipe.drain();
      assertThat(pipe.decisions())
          .extracting(Decision::inputOffset, x -> x.outcome().tag(), Decision::layer)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(0L, "held", "window"),
              org.assertj.core.groups.Tuple.tuple(1L, "held", "window"),
              org.assertj.core.groups.Tuple.tuple(2L, "duplicate", "record"),
              org.assertj.core.groups.Tuple.tuple(1L, "released", "window"),
              org.assertj.core.groups.Tuple.tuple(0L, "released", "window"),
              org.assertj.core.groups.Tuple.tuple(3L, "held", "window"));
    }
  }

  private static Topology topology(String log, Duration window) {
    return ProcessorTopology.build(
        settings(log, window),
        Dedup.disabled(),
        new ProcessorMetrics(new SimpleMeterRegistry()),
        EnvelopeParser.withDefaults(),
        FaultHook.NONE,
        RedisBudget.unbounded());
  }

  private static TopologySettings settings(String log, Duration window) {
    return new TopologySettings(
        TOPICS,
        256,
        Duration.ofMillis(20),
        RedisFailureMode.DEGRADE,
        Duration.ofSeconds(1),
        4096,
        "",
        null,
        window,
        ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
        TopologySettings.DEFAULT_DECIDED_HORIZON,
        log,
        0);
  }

  private static TestRecord<String, byte[]> event(
      String runId, String requestId, int second, long arrivalMs) {
    byte[] body =
        SumeEvents.event(runId, requestId, T0.plusSeconds(second)).type("run.updated").bytes();
    return record(runId, requestId, body, arrivalMs);
  }

  private static TestRecord<String, byte[]> garbage(String runId, long arrivalMs) {
    return record(runId, "bad", "{not json".getBytes(StandardCharsets.UTF_8), arrivalMs);
  }

  private static TestRecord<String, byte[]> record(
      String runId, String requestId, byte[] body, long arrivalMs) {
    RecordHeaders headers = new RecordHeaders();
    headers.add("request_id", requestId.getBytes(StandardCharsets.UTF_8));
    headers.add("received_at", Long.toString(T0_MS - 100).getBytes(StandardCharsets.UTF_8));
    return new TestRecord<>(runId, body, headers, Instant.ofEpochMilli(arrivalMs));
  }

  /** A processor with the decision log on, in a test driver; drains only when told to. */
  private static final class Pipe implements AutoCloseable {
    private final TopologyTestDriver driver;
    private final TestInputTopic<String, byte[]> in;
    private final TestOutputTopic<String, byte[]> log;
    private final List<TestRecord<String, byte[]>> read = new java.util.ArrayList<>();

    Pipe(Duration window) {
      driver =
          new TopologyTestDriver(
              topology(LOG, window), TestTopology.streamsProperties("decision-log"), Instant.now());
      in =
          driver.createInputTopic(
              TOPICS.webhooks(), Serdes.String().serializer(), Serdes.ByteArray().serializer());
      log =
          driver.createOutputTopic(
              LOG, Serdes.String().deserializer(), Serdes.ByteArray().deserializer());
    }

    void send(TestRecord<String, byte[]> record) {
      in.pipeInput(record);
    }

    void drain() {
      driver.advanceWallClockTime(Duration.ofMillis(20));
    }

    List<Decision> decisions() {
      read.addAll(log.readRecordsToList());
      return read.stream().map(r -> Decision.parse(r.value())).toList();
    }

    List<String> decisionKeys() {
      decisions();
      return read.stream().map(TestRecord::key).toList();
    }

    @Override
    public void close() {
      driver.close();
    }
  }
}
