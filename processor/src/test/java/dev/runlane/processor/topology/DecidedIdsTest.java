package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Outcome;
import dev.runlane.processor.dedup.Recorded;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The record of decided ids alone, on an in-memory window store (D68). */
class DecidedIdsTest {
  private static final Duration H = Duration.ofHours(24);
  private static final long NOW = Instant.parse("2026-12-07T10:00:00Z").toEpochMilli();

  @TempDir Path stateDir;

  private WindowStore<String, byte[]> store;

  @BeforeEach
  void setUp() {
    MockProcessorContext<String, byte[]> context = TestTopology.context("decided", 0, stateDir);
    TestTopology.stores(context);
    store = context.getStateStore(StoreNames.DECIDED);
  }

  private static PendingEvent event(String runId, String requestId, long arrivedMs) {
    return new PendingEvent(
        runId,
        requestId,
        Instant.parse("2026-12-07T09:00:00Z"),
        "run.updated",
        arrivedMs,
        new RecordHeaders(),
        "{}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void tellsItsRunsIdsFromAnotherRunsAndFromIdsItNeverDecided() {
    DecidedIds ids = new DecidedIds(store, H, false, NOW);
    ids.remember(event("run-1", "a", NOW), Claim.NEW, Outcome.APPLY);
    ids.remember(event("run-1", "b", NOW), Claim.UNAVAILABLE, Outcome.STALE);
    ids.remember(event("run-2", "a", NOW), Claim.UNAVAILABLE, Outcome.REUSED_STORE);

    assertThat(ids.find(event("run-1", "a", NOW + 1))).isEqualTo(Recorded.APPLIED);
    assertThat(ids.find(event("run-1", "b", NOW + 1))).isEqualTo(Recorded.STALE);
    assertThat(ids.find(event("run-2", "a", NOW + 1))).isEqualTo(Recorded.OTHER_RUN);
    assertThat(ids.find(event("run-1", "c", NOW + 1))).isEqualTo(Recorded.NONE);
    assertThat(ids.find(event("run-1", "a", NOW + H.toMillis() + 1)))
        .as("a horizon after it was decided")
        .isEqualTo(Recorded.NONE);
  }

  /**
   * Started empty next to runs (the upgrade), the record vouches for no absence until a horizon has
   * passed, also across a restart: it notes since when with its first decision.
   */
  @Test
  void anUpgradedTasksRecordCoversFromItsStartAcrossARestart() {
    DecidedIds first = new DecidedIds(store, H, true, NOW);
    assertThat(first.find(event("run-1", "old", NOW + 1))).isEqualTo(Recorded.UNKNOWN);
    first.remember(event("run-1", "new", NOW + 2), Claim.NEW, Outcome.APPLY);

    DecidedIds restarted = new DecidedIds(store, H, true, NOW + 10_000);
    assertThat(restarted.find(event("run-1", "old", NOW + 3))).isEqualTo(Recorded.UNKNOWN);
    assertThat(restarted.find(event("run-1", "new", NOW + 3))).isEqualTo(Recorded.APPLIED);
    assertThat(restarted.find(event("run-1", "old", NOW + H.toMillis() + 1)))
        .as("a horizon after the upgrade")
        .isEqualTo(Recorded.NONE);
  }

  @Test
  void aCopyDecidedOnItsOwnMarkerIsRecordedAgainAndAnothersIsNot() {
    DecidedIds ids = new DecidedIds(store, H, false, NOW);
    ids.remember(event("run-1", "a", NOW), Claim.NEW, Outcome.APPLY);
    ids.remember(event("run-1", "a", NOW + 10), Claim.DONE_BY_THIS_TASK, Outcome.DUPLICATE_REDIS);
    ids.remember(event("run-1", "b", NOW + 10), Claim.DONE_BY_OTHER, Outcome.DUPLICATE_REDIS);

    assertThat(ids.find(event("run-1", "a", NOW + 10 + H.toMillis())))
        .as("kept a horizon from its last copy")
        .isEqualTo(Recorded.APPLIED);
    assertThat(ids.find(event("run-1", "b", NOW + 11))).isEqualTo(Recorded.NONE);
  }
}
