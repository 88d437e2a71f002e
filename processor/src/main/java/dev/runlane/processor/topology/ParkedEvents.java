package dev.runlane.processor.topology;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A task's parked events: read and not yet decided, in the changelogged pending store by input
 * offset (design.md §6.1, D5, D30); with a reorder window, also how many each run has (D60).
 */
final class ParkedEvents {
  private final KeyValueStore<Long, PendingEvent> store;
  private final ParkedRuns runs; // null without a reorder window

  /**
   * @param countRuns whether to count each run's parked events, which only the reorder window asks
   */
  ParkedEvents(KeyValueStore<Long, PendingEvent> store, boolean countRuns) {
    this.store = store;
    this.runs = countRuns ? new ParkedRuns() : null;
    if (runs != null) {
      try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
        it.forEachRemaining(kv -> runs.parked(kv.value.runId()));
      }
    }
  }

  void park(long offset, PendingEvent event) {
    if (runs != null) {
      runs.parked(event.runId());
    }
    store.put(offset, event);
  }

  /** Every parked event, oldest offset first. */
  List<KeyValue<Long, PendingEvent>> all() {
    List<KeyValue<Long, PendingEvent>> parked = new ArrayList<>();
    try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
      while (it.hasNext()) {
        parked.add(it.next());
      }
    }
    return parked;
  }

  /** A decided event leaves the pending store, and with a window its run's parked count (D60). */
  void unpark(long offset, PendingEvent event) {
    store.delete(offset);
    if (runs != null) {
      runs.decided(event.runId());
    }
  }

  /** Whether {@code runId} has an event parked; only with a reorder window. */
  boolean hasRun(String runId) {
    return runs.has(runId);
  }
}
