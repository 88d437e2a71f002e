package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.generation.Replay;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An event a rebuild re-derives silently, whose decision fails every attempt, is dead-lettered
 * {@code apply_failed} all the same: the older generation may have applied it, and the rebuilt run
 * would otherwise differ without a word (issue 36 item 6).
 */
class ReplayApplyFailedIT {
  @TempDir Path stateDir;

  @Test
  void aSilentlyReDerivedEventThatCannotBeDecidedIsDeadLetteredNotOnlyCounted() {
    Replay rebuild =
        new Replay("rebuild-1", null, Map.of(0, 10L), Map.of(0, 10L), Map.of(0, 10L), Map.of());
    TopologySettings settings =
        new TopologySettings(
            TestTopology.TOPICS,
            256,
            Duration.ofMillis(10),
            RedisFailureMode.DEGRADE,
            Duration.ofSeconds(1),
            4096,
            "g1/",
            rebuild,
            Duration.ZERO,
            ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
            TopologySettings.DEFAULT_DECIDED_HORIZON);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MockProcessorContext<String, byte[]> context =
        TestTopology.context("replay-apply-failed", 0, stateDir);
    context.setCurrentSystemTimeMs(1_000);
    context.setCurrentStreamTimeMs(0);
    TestTopology.stores(context);
    try (Dedup dedup =
        DecisionTableIT.redisDedup(
            EmbeddedRedis.shared().uri(), "test:" + UUID.randomUUID() + ":", registry)) {
      RunEventProcessor processor =
          new RunEventProcessor(
              settings,
              EnvelopeParser.withDefaults(),
              dedup,
              new ProcessorMetrics(registry),
              new FaultHook() {
                @Override
                public void afterMarkDone(Collection<String> requestIds) {}

                @Override
                public void beforeDecide(String requestId) {
                  throw new IllegalStateException("a bug in deciding " + requestId);
                }
              },
              new FailedAttempts(),
              RedisBudget.unbounded(),
              new SharedRoundTrips(dedup),
              InputReader.NONE);
      processor.init(context);
      byte[] body =
          SumeEvents.event("run-1", "poison", Instant.parse("2026-12-07T09:00:00Z"))
              .type("run.updated")
              .bytes();
      context.setRecordMetadata(TestTopology.TOPICS.webhooks(), 0, 3); // below live_from: silent
      processor.process(new Record<>("run-1", body, 500L));
      Runnable drain = () -> context.scheduledPunctuators().get(0).getPunctuator().punctuate(1_000);
      for (int attempt = 1; attempt <= FailedAttempts.MAX_ATTEMPTS; attempt++) {
        assertThatThrownBy(drain::run).isInstanceOf(PoisonEventException.class);
      }
      drain.run();

      List<MockProcessorContext.CapturedForward<? extends String, ? extends byte[]>> dlq =
          context.forwarded(ProcessorTopology.DLQ_SINK);
      assertThat(dlq).hasSize(1);
      assertThat(
              new String(
                  dlq.get(0).record().headers().lastHeader("dlq.reason").value(),
                  StandardCharsets.UTF_8))
          .isEqualTo("apply_failed");
      assertThat(
              new String(
                  dlq.get(0).record().headers().lastHeader("dlq.detail").value(),
                  StandardCharsets.UTF_8))
          .startsWith("while a replay re-derived it silently");
      processor.close();
    }
  }
}
