package dev.runlane.processor.topology;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.runs.RunHeads;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import java.time.Instant;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A task's runs: their heads, which a decision reads, cached in front of the run store (D33), and
 * applying an event, which writes the run's new state to the store and the event and state to the
 * outputs (design.md §6.1, §6.5).
 *
 * <p>Made anew in every {@code init()}: a head cached before the store was rolled back or restored
 * would decide against a state that no longer exists. Streams may call init() again on a processor
 * it revives rather than build a new one (D33).
 */
final class Runs {
  /**
   * Run heads cached per task: about 2 MiB each (a head, its run id and the map's entry, ~250 B).
   * The bench's 100k runs over 12 tasks nearly fit (about 8,300 a task); a deployment with more
   * runs active at once than this reads the rest from the store, as before.
   */
  static final int CACHED_RUN_HEADS = 8_192;

  private final KeyValueStore<String, byte[]> store;
  private final Outputs outputs;
  private RunHeads heads = new RunHeads(CACHED_RUN_HEADS);

  Runs(KeyValueStore<String, byte[]> store, Outputs outputs) {
    this.store = store;
    this.outputs = outputs;
  }

  /** The run's head, or null for a run the store does not hold. */
  RunState.Head head(String runId) {
    return heads.get(runId, this::storedHead);
  }

  /** Applies {@code event} to its run, whose head is {@code current}, and emits both. */
  void apply(PendingEvent event, RunState.Head current, Replay.Range range) {
    RunState next =
        RunState.apply(
            current,
            event.runId(),
            event.requestId(),
            event.createdAt(),
            event.type(),
            Instant.ofEpochMilli(event.timestamp()),
            null); // the data goes from the body into the JSON as it is (D32)
    byte[] json = RunStateJson.withDataOf(next, event.raw());
    store.put(event.runId(), json);
    heads.applied(event.runId(), next.head());
    outputs.applied(event, json, range);
  }

  /**
   * Applies a held event at input {@code offset} as its reorder window passed (D46), and records
   * the release (D86).
   */
  void applyReleased(long offset, PendingEvent event, Replay.Range range) {
    apply(event, head(event.runId()), range);
    outputs.decisions().released(offset, event, range);
  }

  /** Whether the task's run store holds any run. */
  boolean any() {
    try (KeyValueIterator<String, byte[]> all = store.all()) {
      return all.hasNext();
    }
  }

  /** The task closes: its heads may be of a transaction that aborts. */
  void close() {
    heads = null;
  }

  private RunState.Head storedHead(String runId) {
    byte[] stored = store.get(runId);
    return stored == null ? null : RunStateJson.readHead(stored);
  }
}
