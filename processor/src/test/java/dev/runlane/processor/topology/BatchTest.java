package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import dev.runlane.processor.dedup.Outcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

/** One batch's claims and decisions, without Redis or Kafka (design.md §6.2). */
class BatchTest {
  private static final TopologySettings SETTINGS =
      TestTopology.settings(RedisFailureMode.DEGRADE, 4096);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ProcessorMetrics metrics = new ProcessorMetrics(registry);
  private final List<KeyValue<Long, PendingEvent>> events = new ArrayList<>();

  private void parked(String runId, String requestId) {
    events.add(
        KeyValue.pair(
            (long) events.size(),
            new PendingEvent(
                runId,
                requestId,
                Instant.parse("2026-12-01T10:00:00Z"),
                "run.updated",
                0L,
                new RecordHeaders(),
                new byte[0])));
  }

  private PendingEvent event(int index) {
    return events.get(index).value;
  }

  private Batch batch(Set<String> waitingRuns) {
    return new Batch(events, waitingRuns, new ReplayRanges(SETTINGS, 0), metrics, true);
  }

  /** A batch of two copies of id {@code a}, the first of run-1, and Redis's answer for it. */
  private Batch twoCopies(String secondRun, Claim redisSaid) {
    parked("run-1", "a");
    parked(secondRun, "a");
    Batch batch = batch(Set.of());
    batch.claimed(Map.of("a", redisSaid));
    return batch;
  }

  /** Asks the batch for the claim of each parked event, in order, as a live event. */
  private void assertLiveClaims(Batch batch, Claim... expected) {
    List<Claim> claims = new ArrayList<>();
    for (KeyValue<Long, PendingEvent> e : events) {
      claims.add(batch.claimOf(e.value, Replay.Range.LIVE));
    }
    assertThat(claims).containsExactly(expected);
  }

  @Test
  void claimsEachIdOnceAndNothingOfARunThatWaits() {
    parked("run-1", "a");
    parked("run-1", "a");
    parked("run-2", "b");
    parked("run-3", "c");

    assertThat(batch(Set.of("run-3")).toClaim())
        .containsExactly(new EventKey("a", "run-1"), new EventKey("b", "run-2"));
  }

  @Test
  void aCopyThatNamesAnotherRunIsReusedWhateverRedisSaid() {
    assertLiveClaims(twoCopies("run-2", Claim.NEW), Claim.NEW, Claim.OTHER_RUN);
  }

  @Test
  void aSecondCopyOfAnIdIsEarlierInTheBatch() {
    assertLiveClaims(twoCopies("run-1", Claim.NEW), Claim.NEW, Claim.EARLIER_IN_BATCH);
  }

  @Test
  void withoutRedisEveryCopyIsDecidedOnTheRunStore() {
    assertLiveClaims(twoCopies("run-1", Claim.UNAVAILABLE), Claim.UNAVAILABLE, Claim.UNAVAILABLE);
  }

  @Test
  void aReplayedEventIsNotAsked() {
    parked("run-1", "a");
    Batch batch = batch(Set.of());

    assertThat(batch.claimOf(event(0), Replay.Range.SILENT)).isEqualTo(Claim.REPLAY);
  }

  @Test
  void aReplayedEventWhoseIdAMarkerGivesToAnotherRunIsReused() {
    parked("run-1", "a");
    parked("run-1", "b");
    Batch batch = batch(Set.of());
    batch.takenForOtherRuns(Set.of("a"));

    assertThat(batch.claimOf(event(0), Replay.Range.SILENT)).isEqualTo(Claim.OTHER_RUN);
    assertThat(batch.claimOf(event(1), Replay.Range.SILENT)).isEqualTo(Claim.REPLAY);
  }

  @Test
  void decidedClaimsBecomeMarkersAndUndecidedOnesGoBack() {
    parked("run-1", "a");
    parked("run-2", "b");
    Batch batch = batch(Set.of());
    batch.claimed(Map.of("a", Claim.NEW, "b", Claim.NEW));

    batch.decided(event(0), batch.claimOf(event(0), Replay.Range.LIVE), Outcome.STALE);

    assertThat(batch.markers()).containsExactly(new Marker(new EventKey("a", "run-1"), true));
    assertThat(batch.claimsUnused()).containsExactly(new EventKey("b", "run-2"));
    assertThat(batch.claimsHeld())
        .containsExactly(new EventKey("a", "run-1"), new EventKey("b", "run-2"));
  }

  /** Redis lost the id, the task's record knows it is another run's: no marker names this run. */
  @Test
  void aReuseTheRecordSawLeavesNoMarkerAndGivesItsClaimBack() {
    parked("run-2", "a");
    Batch batch = batch(Set.of());
    batch.claimed(Map.of("a", Claim.NEW));

    batch.decided(event(0), batch.claimOf(event(0), Replay.Range.LIVE), Outcome.REUSED_STORE);

    assertThat(batch.markers()).isEmpty();
    assertThat(batch.claimsUnused()).containsExactly(new EventKey("a", "run-2"));
  }

  @Test
  void countsItsDecisionsAndThoseMadeWithoutRedis() {
    parked("run-1", "a");
    Batch batch = batch(Set.of());
    batch.claimed(Map.of("a", Claim.UNAVAILABLE));
    batch.decided(event(0), Claim.UNAVAILABLE, Outcome.APPLY);

    batch.count();

    assertThat(registry.get(ProcessorMetrics.DEGRADED).counter().count()).isEqualTo(1);
    assertThat(registry.get(ProcessorMetrics.BATCH_SIZE).summary().count()).isEqualTo(1);
    assertThat(batch.markers()).isEmpty();
  }
}
