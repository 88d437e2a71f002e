package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

/**
 * One event whose decision always throws does not stall its partition (D43): after three attempts,
 * each aborting its transaction, it is dead-lettered as {@code apply_failed} with the exception,
 * and the run's later events are applied as if it never came.
 */
@RealInfra
class PoisonEventIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void aPoisonEventIsDeadLetteredAfterThreeAttemptsAndItsRunMovesOn(Infra infra) throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    FaultHook poison =
        new FaultHook() {
          @Override
          public void afterMarkDone(Collection<String> requestIds) {}

          @Override
          public void beforeDecide(String requestId) {
            if (requestId.equals("poison")) {
              attempts.incrementAndGet();
              throw new IllegalArgumentException("cannot decide this one");
            }
          }
        };
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "poison");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader dlq = h.new Reader(h.topics.dlq())) {
      h.start(poison);
      h.send("run-p", "first", T0);
      await().atMost(Duration.ofSeconds(60)).until(() -> h.count("applied", "store") == 1);
      h.send("run-p", "poison", T0.plusSeconds(1));
      h.send("run-p", "after", T0.plusSeconds(2));
      h.send("run-q", "elsewhere", T0);

      await()
          .atMost(Duration.ofSeconds(120))
          .dontCatchUncaughtExceptions()
          .until(() -> dlq.poll().size() == 1 && events.poll().size() == 3);
      ConsumerRecord<String, byte[]> dead = dlq.records.get(0);
      assertThat(ProcessorHarness.header(dead, RecordHeaders.REQUEST_ID)).isEqualTo("poison");
      assertThat(ProcessorHarness.header(dead, RecordHeaders.DLQ_REASON)).isEqualTo("apply_failed");
      assertThat(ProcessorHarness.header(dead, RecordHeaders.DLQ_DETAIL))
          .contains("3 attempts failed")
          .contains("java.lang.IllegalArgumentException: cannot decide this one");
      assertThat(new String(dead.value(), StandardCharsets.UTF_8)).contains("\"poison\"");
      assertThat(events.requestIds()).containsExactlyInAnyOrder("first", "after", "elsewhere");
      assertThat(attempts.get()).isEqualTo(3);
      // Its one decision, recorded with the dead letter, after the attempts that aborted (D86).
      try (ProcessorHarness.Reader log = h.new Reader(h.decisions())) {
        await().atMost(Duration.ofSeconds(30)).until(() -> log.caughtUp());
        List<Decision> poisoned =
            log.records.stream()
                .map(r -> Decision.parse(r.value()))
                .filter(d -> "poison".equals(d.requestId()))
                .toList();
        assertThat(poisoned)
            .extracting(d -> d.outcome().tag(), Decision::layer, Decision::reason, Decision::output)
            .containsExactly(tuple("dead-lettered", "attempts", "apply_failed", h.topics.dlq()));
        assertThat(poisoned.get(0).input())
            .isEqualTo(h.topics.webhooks() + "/" + dead.partition() + "/1");
      }
      assertThat(retried(h, "retried")).isEqualTo(3);
      assertThat(retried(h, "dead_lettered")).isEqualTo(1);

      // The run moved on past it, and the processor neither stopped nor counts it as broken.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> ProcessorIT.queryRun(h, "run-p").appliedCount() == 2);
      assertThat(ProcessorIT.queryRun(h, "run-p").lastRequestId()).isEqualTo("after");
      assertThat(h.app.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);
      assertThat(h.app.fatal()).isNull();
      assertThat(ProcessorIT.queryRun(h, "run-q").lastRequestId()).isEqualTo("elsewhere");
    }
  }

  private static double retried(ProcessorHarness h, String result) {
    var c = h.registry.find(ProcessorMetrics.APPLY_FAILURES).tag("result", result).counter();
    return c == null ? 0 : c.count();
  }
}
