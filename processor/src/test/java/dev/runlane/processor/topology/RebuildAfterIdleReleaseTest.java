package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.runs.RunState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A rebuild after generation 0's idle clock released a held event (design.md §6.6, §8; D46, D50,
 * D90): generation 0 emitted it at wall time, before it read an older event of its run that had
 * arrived within the window of it (the ingress wrote that one late, or the task lagged) and then
 * stopped. Generation 1 re-derives the released event silently by the records' times alone, so it
 * holds it again; the older event, never decided by generation 0, is emitted by generation 1, after
 * the newer one generation 0 already emitted.
 */
class RebuildAfterIdleReleaseTest {
  private static final long T0_MS = WindowPipe.T0.toEpochMilli();
  private static final Duration WINDOW = Duration.ofSeconds(1);

  /**
   * Generation 0 reads {@code first}, holds it and lets its idle clock release it; it stops having
   * read nothing else.
   *
   * @return what it applied
   */
  private static List<String> generation0(String requestId, int second) {
    try (WindowPipe g0 =
        new WindowPipe(
            TestTopology.windowed(256, Duration.ofMillis(20), WINDOW),
            Instant.ofEpochMilli(T0_MS))) {
      g0.send(WindowPipe.record("run-1", requestId, second, T0_MS));
      g0.drain(); // held
      for (int i = 0; i < 5; i++) {
        g0.drainAfter(Duration.ofMillis(ReorderWindow.MAX_IDLE_STEP_MS)); // idle: nothing read
      }
      return g0.applied();
    }
  }

  /**
   * Generation 1 of a rebuild after generation 0 committed offset 0 of partition 0 and stopped:
   * offset 0 is re-derived silently, offset 1 (which 0 never read) is decided on the store alone
   * and emitted.
   */
  private static WindowPipe generation1() {
    Replay rebuild =
        new Replay("rebuild-g1", null, Map.of(0, 1L), Map.of(0, 1L), Map.of(0, 2L), Map.of());
    return new WindowPipe(
        TestTopology.replaying(1, rebuild, WINDOW), Instant.ofEpochMilli(T0_MS + 60_000));
  }

  /** The input's end: a record of another run a while later moves the task's time on. */
  private static void end(WindowPipe pipe) {
    pipe.send(WindowPipe.record("run-end", "end", 0, T0_MS + 5_000));
    pipe.drain();
    pipe.drain();
  }

  @Test
  void anOlderEventGeneration0NeverReadIsStaleNotEmittedAfterTheNewerOneItReleased() {
    List<String> emitted = new ArrayList<>(generation0("n", 3));
    assertThat(emitted).as("generation 0's idle clock released n").containsExactly("run-1/n");

    List<String> stale;
    RunState.Head head;
    try (WindowPipe g1 = generation1()) {
      g1.send(WindowPipe.record("run-1", "n", 3, T0_MS)); // offset 0: silent
      // Offset 1, older than n, received within n's window; generation 0 never read it.
      g1.send(WindowPipe.record("run-1", "a", 1, T0_MS + 500));
      g1.drain();
      end(g1);
      emitted.addAll(g1.applied());
      stale = g1.stale();
      head = g1.head("run-1");
    }

    // sume.events as a consumer reads it: generation 0's records, then generation 1's.
    assertThat(emitted)
        .as("run-1's events in sume.events move forward (G3)")
        .containsExactly("run-1/n");
    assertThat(stale)
        .as("a came after n was applied: stale, as generation 0 had decided it")
        .containsExactly("run-1/a");
    assertThat(head)
        .as("generation 1's state is the one generation 0 left in sume.runs")
        .isEqualTo(new RunState.Head("n", WindowPipe.T0.plusSeconds(3), 1));
  }

  @Test
  void aNewerEventAfterTheSilentlyHeldOneIsStillAppliedAndEmitted() {
    List<String> emitted = new ArrayList<>(generation0("s", 1));
    assertThat(emitted).containsExactly("run-1/s");

    RunState.Head head;
    try (WindowPipe g1 = generation1()) {
      g1.send(WindowPipe.record("run-1", "s", 1, T0_MS)); // offset 0: silent
      g1.send(WindowPipe.record("run-1", "u", 3, T0_MS + 500)); // newer: decided as new
      g1.drain();
      end(g1);
      emitted.addAll(g1.applied());
      assertThat(g1.stale()).isEmpty();
      head = g1.head("run-1");
    }

    assertThat(emitted).containsExactly("run-1/s", "run-1/u");
    assertThat(head).isEqualTo(new RunState.Head("u", WindowPipe.T0.plusSeconds(3), 2));
  }

  @Test
  void anEventGeneration0HeldWhenItStoppedIsDecidedByTheRecordsTimesAsItWasThere() {
    // Generation 0 holds s1, u and s2 (older than s1); x, a window after s1, releases s2 and s1
    // as it is read; u (newer) stays held, and x too, when generation 0 stops.
    List<String> emitted;
    try (WindowPipe g0 =
        new WindowPipe(
            TestTopology.windowed(256, Duration.ofMillis(20), WINDOW),
            Instant.ofEpochMilli(T0_MS))) {
      g0.send(WindowPipe.record("run-1", "s1", 2, T0_MS));
      g0.send(WindowPipe.record("run-1", "u", 3, T0_MS + 100));
      g0.send(WindowPipe.record("run-1", "s2", 1, T0_MS + 200));
      g0.drain();
      g0.send(WindowPipe.record("run-2", "x", 1, T0_MS + 1_050));
      g0.drain();
      emitted = new ArrayList<>(g0.applied());
    }
    assertThat(emitted).containsExactly("run-1/s2", "run-1/s1");

    RunState.Head head;
    Replay rebuild =
        new Replay(
            "rebuild-g1",
            null,
            Map.of(0, 4L),
            Map.of(0, 4L),
            Map.of(0, 4L),
            Map.of(0, List.of(1L, 3L)),
            Map.of(0, List.of(1L, 3L)));
    try (WindowPipe g1 =
        new WindowPipe(
            TestTopology.replaying(1, rebuild, WINDOW), Instant.ofEpochMilli(T0_MS + 60_000))) {
      g1.send(WindowPipe.record("run-1", "s1", 2, T0_MS)); // silent
      g1.send(WindowPipe.record("run-1", "u", 3, T0_MS + 100)); // held when 0 stopped
      g1.send(WindowPipe.record("run-1", "s2", 1, T0_MS + 200)); // silent
      g1.send(WindowPipe.record("run-2", "x", 1, T0_MS + 1_050)); // held when 0 stopped
      g1.drain();
      end(g1);
      emitted.addAll(g1.applied());
      head = g1.head("run-1");
    }

    assertThat(emitted).containsExactly("run-1/s2", "run-1/s1", "run-1/u", "run-2/x");
    assertThat(head)
        .as("u's state counts the three events of run-1 in sume.events")
        .isEqualTo(new RunState.Head("u", WindowPipe.T0.plusSeconds(3), 3));
  }
}
