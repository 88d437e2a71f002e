package dev.runlane.processor.topology;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;

/**
 * A fresh processor of one generation in a test driver, without Redis, that drains only when told
 * to: for the reorder window's tests, one generation after another over the same input.
 */
final class WindowPipe implements AutoCloseable {
  /** The events' {@code created_at} is this plus their second. */
  static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final TopologyTestDriver driver;
  private final Duration batchInterval;
  private final TestInputTopic<String, byte[]> in;
  private final TestOutputTopic<String, byte[]> events;
  private final TestOutputTopic<String, byte[]> stale;

  /** A processor with {@code settings} whose wall clock starts at {@code wallClock}. */
  WindowPipe(TopologySettings settings, Instant wallClock) {
    this.batchInterval = settings.batchInterval();
    driver =
        new TopologyTestDriver(
            ProcessorTopology.build(
                settings,
                Dedup.disabled(),
                new ProcessorMetrics(registry),
                EnvelopeParser.withDefaults(),
                FaultHook.NONE,
                RedisBudget.unbounded()),
            TestTopology.streamsProperties("window-pipe"),
            wallClock);
    in =
        driver.createInputTopic(
            settings.topics().webhooks(),
            Serdes.String().serializer(),
            Serdes.ByteArray().serializer());
    events = output(settings.topics().events());
    stale = output(settings.topics().stale());
  }

  private TestOutputTopic<String, byte[]> output(String topic) {
    return driver.createOutputTopic(
        topic, Serdes.String().deserializer(), Serdes.ByteArray().deserializer());
  }

  /** An event of {@code runId} created {@code second} s after {@link #T0}, received then. */
  static TestRecord<String, byte[]> record(
      String runId, String requestId, int second, long arrivalMs) {
    byte[] body =
        SumeEvents.event(runId, requestId, T0.plusSeconds(second)).type("run.updated").bytes();
    RecordHeaders headers = new RecordHeaders();
    headers.add("request_id", requestId.getBytes(StandardCharsets.UTF_8));
    return new TestRecord<>(runId, body, headers, Instant.ofEpochMilli(arrivalMs));
  }

  void send(TestRecord<String, byte[]> record) {
    in.pipeInput(record);
  }

  /** One batch interval of wall-clock time: the task drains. */
  void drain() {
    driver.advanceWallClockTime(batchInterval);
  }

  /** {@code gap} of wall-clock time, then a drain: with nothing parked, the idle clock moves. */
  void drainAfter(Duration gap) {
    driver.advanceWallClockTime(gap);
  }

  /** The events applied since last asked, as run/request, any {@code run-end} left out. */
  List<String> applied() {
    return named(events);
  }

  /** The events listed stale since last asked, as run/request. */
  List<String> stale() {
    return named(stale);
  }

  /** The head of {@code runId} in the task's run store, or null. */
  RunState.Head head(String runId) {
    KeyValueStore<String, byte[]> runs = driver.getKeyValueStore(StoreNames.RUNS);
    byte[] state = runs.get(runId);
    return state == null ? null : RunStateJson.readHead(state);
  }

  private static List<String> named(TestOutputTopic<String, byte[]> topic) {
    List<String> out = new ArrayList<>();
    for (TestRecord<String, byte[]> r : topic.readRecordsToList()) {
      if (r.key().equals("run-end")) {
        continue;
      }
      out.add(
          r.key()
              + "/"
              + new String(r.headers().lastHeader("request_id").value(), StandardCharsets.UTF_8));
    }
    return out;
  }

  @Override
  public void close() {
    driver.close();
  }
}
