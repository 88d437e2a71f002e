package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.dedup.Outcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reorder window alone, on in-memory stores (design.md §6.6, D46, D60). */
class ReorderWindowTest {
  private static final TopicNames TOPICS = TestTopology.TOPICS;
  private static final long T0 = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();
  private static final long W = 1_000;

  @TempDir Path stateDir;

  private MockProcessorContext<String, byte[]> context;
  private ParkedEvents parked;
  private ReorderWindow window;
  private long wallClockMs = 5_000;

  @BeforeEach
  void setUp() {
    context = TestTopology.context("reorder-window", 0, stateDir);
    TopologySettings settings =
        TestTopology.windowed(256, Duration.ofMillis(50), Duration.ofMillis(W));
    ProcessorMetrics metrics = new ProcessorMetrics(new SimpleMeterRegistry());
    ReplayRanges ranges = new ReplayRanges(settings, 0);
    Runs runs =
        new Runs(
            store(StoreNames.RUNS, Serdes.String(), Serdes.ByteArray()),
            new Outputs(context, settings, metrics));
    parked =
        new ParkedEvents(
            store(StoreNames.PENDING, Serdes.Long(), new PendingEvent.PendingEventSerde()), true);
    ReorderBuffer held =
        new ReorderBuffer(
            store(StoreNames.HELD, Serdes.Long(), new PendingEvent.PendingEventSerde()),
            InputReader.NONE,
            new TopicPartition(TOPICS.webhooks(), 0));
    window = new ReorderWindow(held, parked, runs, ranges, metrics, settings, () -> wallClockMs);
  }

  private <K, V> KeyValueStore<K, V> store(String name, Serde<K> keys, Serde<V> values) {
    KeyValueStore<K, V> store =
        Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values)
            .withLoggingDisabled()
            .build();
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
    return store;
  }

  private static PendingEvent event(String runId, String requestId, int second, long arrivedMs) {
    return new PendingEvent(
        runId,
        requestId,
        Instant.parse("2026-12-01T09:00:00Z").plusSeconds(second),
        "run.updated",
        arrivedMs,
        new RecordHeaders(),
        "{}".getBytes(StandardCharsets.UTF_8));
  }

  private List<String> applied() {
    return context.forwarded(ProcessorTopology.EVENTS_SINK).stream()
        .map(f -> (String) f.record().key())
        .toList();
  }

  @Test
  void holdsAnEventToApplyAndAppliesItAWindowAfterItArrived() {
    assertThat(window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY)).isEqualTo(Outcome.HELD);

    window.releaseBeforeDecision(T0 + W - 1);
    assertThat(applied()).isEmpty();
    window.releaseBeforeDecision(T0 + W);
    assertThat(applied()).containsExactly("run-1");
  }

  @Test
  void aCopyOfAHeldEventIsADuplicateAndALateOneStaysStale() {
    window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY);

    assertThat(window.hold(1, event("run-1", "a", 1, T0), Outcome.APPLY))
        .isEqualTo(Outcome.DUPLICATE_STORE);
    assertThat(window.hold(2, event("run-1", "z", 0, T0), Outcome.STALE)).isEqualTo(Outcome.STALE);
  }

  @Test
  void aRecordReadDoesNotReleaseARunThatHasAnEventParked() {
    window.hold(0, event("run-1", "a", 2, T0), Outcome.APPLY);
    parked.park(1, event("run-1", "b", 1, T0 + 500));

    window.releaseAsRead(T0 + W);
    assertThat(applied()).as("released now, a would make the parked b stale").isEmpty();

    window.releaseBeforeDecision(T0 + W);
    assertThat(applied()).containsExactly("run-1");
  }

  @Test
  void anIdlePartitionMovesOnFromItsStreamTimeInStepsOfAtMostTheIdleStep() {
    window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY);
    window.drained(T0, true); // the first drain starts the idle clock
    for (int i = 0; i < 3; i++) {
      wallClockMs += 10_000; // a busy thread: each gap counts as the idle step only
      window.drained(T0, true);
    }
    assertThat(applied()).as("idle for 3 steps of 250 ms, under the 1 s window").isEmpty();

    wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    window.drained(T0, true);

    assertThat(applied()).containsExactly("run-1");
  }

  @Test
  void theIdleClockStartsOnlyOnceTheTaskHasReadWhatItsLastCommitDidNotCover() {
    window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY);
    window.awaitRead(CompletableFuture.completedFuture(OptionalLong.of(7)), NOT_BEHIND);
    for (int i = 0; i < 8; i++) {
      window.drained(T0, true);
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
    window.read(6);
    window.drained(T0, true);
    assertThat(applied()).as("2 s of drains before offset 7 is read again").isEmpty();

    window.read(7);
    for (int i = 0; i < 4; i++) {
      window.drained(T0, true);
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
    assertThat(applied()).as("3 steps of idle clock since").isEmpty();
    window.drained(T0, true);
    assertThat(applied()).containsExactly("run-1");
  }

  @Test
  void theClockWaitsForTheLookupAndNotForARecordAlreadyReadAgain() {
    window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY);
    CompletableFuture<OptionalLong> tail = new CompletableFuture<>();
    window.awaitRead(tail, NOT_BEHIND);
    for (int i = 0; i < 8; i++) {
      window.drained(T0, true);
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
    assertThat(applied()).as("2 s of drains while the lookup had not answered").isEmpty();

    window.read(9); // the task read past the tail while the lookup ran
    tail.complete(OptionalLong.of(7));
    for (int i = 0; i < 5; i++) {
      window.drained(T0, true);
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
    assertThat(applied()).containsExactly("run-1");
  }

  @Test
  void aFailedLookupFailsTheDrain() {
    window.awaitRead(
        CompletableFuture.failedFuture(new IllegalStateException("broker gone")), NOT_BEHIND);
    assertThatThrownBy(() -> window.drained(T0, true))
        .isInstanceOf(IllegalStateException.class)
        .hasRootCauseMessage("broker gone");
  }

  /**
   * A task that reads nothing because it lags is not idle: while a look at the input finds it
   * behind, the idle clock releases nothing, whatever the wall clock says (D72).
   */
  @Test
  void theIdleClockReleasesNothingWhileTheTaskIsBehindItsInput() {
    window.hold(0, event("run-1", "a", 1, T0), Outcome.APPLY);
    CompletableFuture<Boolean> behind = CompletableFuture.completedFuture(true);
    List<Long> askedAt = new ArrayList<>();
    window.awaitRead(
        CompletableFuture.completedFuture(OptionalLong.empty()),
        read -> {
          askedAt.add(read);
          return behind;
        });
    window.read(3);
    for (int i = 0; i < 12; i++) {
      window.drained(T0, true);
      wallClockMs += ReorderWindow.MAX_IDLE_STEP_MS;
    }
    assertThat(applied()).as("3 s of drains, the task behind its input").isEmpty();
    assertThat(askedAt).as("asked with the highest offset read").contains(3L);

    window.awaitRead(
        CompletableFuture.completedFuture(OptionalLong.empty()),
        read -> CompletableFuture.completedFuture(false));
    window.drained(T0, true);
    assertThat(applied()).containsExactly("run-1");
  }

  private static final LongFunction<CompletableFuture<Boolean>> NOT_BEHIND =
      read -> CompletableFuture.completedFuture(false);
}
