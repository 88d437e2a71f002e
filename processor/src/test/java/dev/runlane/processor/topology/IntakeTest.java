package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedForward;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a record must pass to be parked, and the dead letter of one that does not (§6.2, §6.4). */
class IntakeTest {
  private static final TopicNames TOPICS = TestTopology.TOPICS;
  private static final int MAX_BODY_BYTES = 4096;
  private static final Instant T1 = Instant.parse("2026-12-01T10:00:01Z");

  @TempDir Path stateDir;

  private MockProcessorContext<String, byte[]> context;
  private Intake intake;

  @BeforeEach
  void setUp() {
    context = TestTopology.context("intake", 2, stateDir);
    context.setRecordMetadata(TOPICS.webhooks(), 2, 7);
    TopologySettings settings = TestTopology.settings(RedisFailureMode.DEGRADE, MAX_BODY_BYTES);
    ProcessorMetrics metrics = new ProcessorMetrics(new SimpleMeterRegistry());
    intake =
        new Intake(
            EnvelopeParser.withDefaults(),
            MAX_BODY_BYTES,
            new ReplayRanges(settings, 2),
            new Outputs(context, settings, metrics),
            metrics);
  }

  private boolean admits(String key, byte[] body) {
    return intake.admit(new Record<>(key, body, 0L), context.recordMetadata().orElseThrow())
        != null;
  }

  private List<CapturedForward<? extends String, ? extends byte[]>> deadLetters() {
    return context.forwarded(ProcessorTopology.DLQ_SINK);
  }

  private static String header(CapturedForward<? extends String, ? extends byte[]> f, String key) {
    return RecordHeaders.get(f.record().headers(), key);
  }

  @Test
  void admitsAnEnvelopeKeyedByItsRunId() {
    assertThat(admits("run-1", SumeEvents.event("run-1", "a", T1).bytes())).isTrue();
    assertThat(context.forwarded()).isEmpty();
  }

  @Test
  void deadLettersARecordKeyedByAnotherRunThanItsEnvelopes() {
    assertThat(admits("run-2", SumeEvents.event("run-1", "a", T1).bytes())).isFalse();

    assertThat(deadLetters()).hasSize(1);
    assertThat(header(deadLetters().get(0), RecordHeaders.DLQ_REASON)).isEqualTo("key_mismatch");
  }

  @Test
  void deadLettersAReferenceToABodyOverTheLimitNotItsBytes() {
    assertThat(admits("run-1", new byte[MAX_BODY_BYTES + 1])).isFalse();

    assertThat(deadLetters()).hasSize(1);
    CapturedForward<? extends String, ? extends byte[]> reference = deadLetters().get(0);
    assertThat(reference.record().value()).isNull();
    assertThat(header(reference, RecordHeaders.DLQ_REASON)).isEqualTo("too_large");
    assertThat(header(reference, RecordHeaders.DLQ_SOURCE)).isEqualTo(TOPICS.webhooks() + "/2/7");
  }
}
