package dev.runlane.common.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.runlane.common.generation.Replay.Range;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplayTest {
  // Partition 0: the earlier generation committed up to 100 and had read up to 120 when it
  // stopped, offsets 40 and 95 still parked; a reprocess from T starts emitting again at 60.
  private static final Replay REPROCESS =
      onPartition0("r", Instant.parse("2026-12-01T10:00:00Z"), 60, 100, 120, List.of(40L, 95L));

  private static final Replay REBUILD =
      new Replay("b", null, Map.of(0, 100L), Map.of(0, 100L), Map.of(0, 100L), Map.of());

  @Test
  void recordsTheEarlierGenerationDecidedBeforeTAreRederivedSilently() {
    assertThat(REPROCESS.rangeOf(0, 0)).isEqualTo(Range.SILENT);
    assertThat(REPROCESS.rangeOf(0, 59)).isEqualTo(Range.SILENT);
    assertThat(REPROCESS.emittedBefore(0, 59)).isTrue();
  }

  @Test
  void recordsItDecidedAfterTAreEmittedAgainMarked() {
    assertThat(REPROCESS.rangeOf(0, 60)).isEqualTo(Range.MARKED);
    assertThat(REPROCESS.rangeOf(0, 99)).isEqualTo(Range.MARKED);
  }

  @Test
  void recordsItReadButNeverCommittedAreDecidedOnTheStoreAloneAndEmittedAsUsual() {
    assertThat(REPROCESS.rangeOf(0, 40)).isEqualTo(Range.UNCLAIMED); // parked, below T
    assertThat(REPROCESS.rangeOf(0, 95)).isEqualTo(Range.UNCLAIMED); // parked, after T
    assertThat(REPROCESS.rangeOf(0, 100)).isEqualTo(Range.UNCLAIMED); // read, not committed
    assertThat(REPROCESS.rangeOf(0, 119)).isEqualTo(Range.UNCLAIMED);
    assertThat(Range.UNCLAIMED.storeAlone()).isTrue();
    assertThat(Range.UNCLAIMED.emits()).isTrue();
    assertThat(REPROCESS.emittedBefore(0, 95)).isFalse();
  }

  @Test
  void recordsNoEarlierGenerationSawAskRedis() {
    assertThat(REPROCESS.rangeOf(0, 120)).isEqualTo(Range.LIVE);
    assertThat(REPROCESS.rangeOf(1, 0)).isEqualTo(Range.LIVE); // a partition it never read
    assertThat(Range.LIVE.storeAlone()).isFalse();
  }

  @Test
  void aRebuildEmitsNothingAgain() {
    assertThat(REBUILD.rangeOf(0, 99)).isEqualTo(Range.SILENT);
    assertThat(REBUILD.rangeOf(0, 100)).isEqualTo(Range.LIVE);
    assertThat(Range.SILENT.emits()).isFalse();
    assertThat(REBUILD.reprocess()).isFalse();
    assertThat(REPROCESS.reprocess()).isTrue();
  }

  @Test
  void anOffsetItsWindowHeldWasDecidedByItOneParkedUndecidedOrUnreadWasNot() {
    Replay replay =
        new Replay(
            "b",
            null,
            Map.of(0, 100L),
            Map.of(0, 100L),
            Map.of(0, 120L),
            Map.of(0, List.of(40L, 95L)),
            Map.of(0, List.of(95L)));
    assertThat(replay.undecidedBefore(0, 40)).as("parked undecided").isTrue();
    assertThat(replay.undecidedBefore(0, 95)).as("held: decided, not emitted").isFalse();
    assertThat(replay.undecidedBefore(0, 99)).as("emitted").isFalse();
    assertThat(replay.undecidedBefore(0, 110)).as("read, not committed").isTrue();
    assertThat(replay.undecidedBefore(0, 120)).as("never read").isTrue();
    assertThat(REBUILD.undecidedBefore(0, 99)).isFalse();
  }

  @Test
  void theHeldOffsetsSurviveTheControlRecordAndARecordWithoutThemHasNone() {
    Replay replay =
        new Replay(
            "b",
            null,
            Map.of(0, 100L),
            Map.of(0, 100L),
            Map.of(0, 120L),
            Map.of(0, List.of(40L, 95L)),
            Map.of(0, List.of(95L)));
    assertThat(ControlTopic.decode(ControlTopic.encode(generation1(replay))).replay())
        .isEqualTo(replay);

    byte[] older = ControlTopic.encode(generation1(REPROCESS)); // as written before D90
    assertThat(new String(older, StandardCharsets.UTF_8)).doesNotContain("held");
    assertThat(ControlTopic.decode(older).replay().held()).isEmpty();
  }

  private static Generation generation1(Replay replay) {
    return new Generation(
        1,
        Generation.State.ACTIVE,
        Generation.Kind.REBUILD,
        "runlane-processor",
        "runlane-processor-g1",
        "sume.webhooks",
        1,
        null,
        replay,
        Instant.parse("2026-12-01T10:00:00Z"),
        null);
  }

  @Test
  void parkedOffsetsAreFoundWithoutScanningThemAll() {
    // 200,000 events held when the old generation stopped, on one partition: a replay asks for
    // the range of each record it re-derives, so a scan per record is quadratic (D75).
    List<Long> held = new ArrayList<>();
    for (long o = 400_000; o > 0; o -= 2) {
      held.add(o); // unsorted, as a hand-written record may be
    }
    Replay replay = onPartition0("big", null, 400_001, 400_001, 400_001, held);

    assertThat(replay.parked().get(0)).isSorted().hasSize(200_000);
    assertTimeoutPreemptively(
        Duration.ofSeconds(5),
        () -> {
          long unclaimed = 0;
          for (long o = 0; o < 400_001; o++) {
            if (replay.rangeOf(0, o) == Range.UNCLAIMED) {
              unclaimed++;
            }
          }
          assertThat(unclaimed).isEqualTo(200_000);
        });
  }

  /** A replay of a one-partition topic: its offsets and parked offsets, all of partition 0. */
  static Replay onPartition0(
      String id, Instant from, long markedFrom, long liveFrom, long claimFrom, List<Long> parked) {
    return new Replay(
        id,
        from,
        Map.of(0, markedFrom),
        Map.of(0, liveFrom),
        Map.of(0, claimFrom),
        Map.of(0, parked));
  }
}
