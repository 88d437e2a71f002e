package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * With a reorder window (D46), events of a run that arrive within it are applied in (created_at,
 * request_id) order whatever order they arrived in; one that arrives after a newer one was applied
 * is stale as without a window; and a partition that receives nothing more still releases.
 */
@RealInfra
class ReorderWindowIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void eventsWithinTheWindowAreAppliedInOrderAndALaterOlderOneIsStale(Infra infra)
      throws Exception {
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "reorder");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale())) {
      h.with("PROCESSOR_REORDER_WINDOW", "2s").start();
      // t3 first, then t1, then t2 (and a Sume retry of t1 while it is held): nothing else comes
      // to this partition, so their release is the idle one, by the wall clock.
      h.send("run-o", "t3", T0.plusSeconds(3));
      h.send("run-o", "t1", T0.plusSeconds(1));
      h.send("run-o", "t2", T0.plusSeconds(2));
      h.send("run-o", "t1", T0.plusSeconds(1));
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 3);

      assertThat(events.requestIds()).containsExactly("t1", "t2", "t3");
      assertThat(events.records.stream().map(ConsumerRecord::key)).containsOnly("run-o");
      RunState state = ProcessorIT.queryRun(h, "run-o");
      assertThat(state.lastRequestId()).isEqualTo("t3");
      assertThat(state.appliedCount()).isEqualTo(3);
      assertThat(h.count("held", "store")).isEqualTo(3);
      assertThat(h.count("duplicate", "redis") + h.count("duplicate", "store"))
          .as("the retry of a held event is a duplicate")
          .isEqualTo(1);
      assertThat(reorder(h, "released")).isEqualTo(3);

      // Older than what the run applied: the window is over for it.
      h.send("run-o", "t0", T0);
      await().atMost(Duration.ofSeconds(30)).until(() -> stale.poll().size() == 1);
      assertThat(stale.requestIds()).containsExactly("t0");
      assertThat(reorder(h, "late")).isEqualTo(1);
      assertThat(events.caughtUp()).isTrue();
      assertThat(events.requestIds()).containsExactly("t1", "t2", "t3");
    }
  }

  @Test
  void aCapOnHeldEventsReleasesTheEarliestEarly(Infra infra) throws Exception {
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "reorder-cap");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.with("PROCESSOR_REORDER_WINDOW", "5s")
          .with("PROCESSOR_REORDER_MAX_HELD", "2")
          .with("TOPIC_PARTITIONS", "1")
          .start();
      for (int i = 0; i < 5; i++) {
        h.sendAsync("run-" + i, "e" + i, T0, "");
      }
      h.flush();
      // Five held, two allowed: three go at once, long before their window ends.
      await().atMost(Duration.ofSeconds(4)).until(() -> events.poll().size() >= 3);
      assertThat(reorder(h, "released_early")).isEqualTo(3);
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() == 5);
      assertThat(events.requestIds()).containsExactlyInAnyOrder("e0", "e1", "e2", "e3", "e4");
    }
  }

  private static double reorder(ProcessorHarness h, String event) {
    var c = h.registry.find(ProcessorMetrics.REORDER).tag("event", event).counter();
    return c == null ? 0 : c.count();
  }
}
