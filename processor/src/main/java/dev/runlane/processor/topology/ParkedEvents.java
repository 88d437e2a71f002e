package dev.runlane.processor.topology;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A task's parked events: read and not yet decided, in the changelogged pending store by input
 * offset (design.md §6.1, D5, D30); how many there are, and with a reorder window how many each run
 * has (D60).
 *
 * <p>Made anew in every {@code init()}, with both counts rebuilt from the store: after a restore or
 * a failover the store may hold events this task never parked (D33).
 */
final class ParkedEvents {
  private final KeyValueStore<Long, PendingEvent> store;
  private final ParkedRuns runs; // null without a reorder window

  /**
   * How many events the store holds, so that a drain with none does not read it: each task drains
   * every batch interval, parked or not, and a thread of twelve tasks reads its stores 600 times a
   * second for nothing at a low rate per partition (D104).
   */
  private int count;

  /**
   * @param countRuns whether to count each run's parked events, which only the reorder window asks
   */
  ParkedEvents(KeyValueStore<Long, PendingEvent> store, boolean countRuns) {
    this.store = store;
    this.runs = countRuns ? new ParkedRuns() : null;
    try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
      it.forEachRemaining(
          kv -> {
            count++;
            if (runs != null) {
              runs.parked(kv.value.runId());
            }
          });
    }
  }

  void park(long offset, PendingEvent event) {
    if (runs != null) {
      runs.parked(event.runId());
    }
    store.put(offset, event);
    count++;
  }

  /** Every parked event, oldest offset first; none without reading the store when none is. */
  List<KeyValue<Long, PendingEvent>> all() {
    if (count == 0) {
      return List.of();
    }
    List<KeyValue<Long, PendingEvent>> parked = new ArrayList<>();
    try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
      while (it.hasNext()) {
        parked.add(it.next());
      }
    }
    count = parked.size(); // the store's word, should an offset ever be parked twice
    return parked;
  }

  /** A decided event leaves the pending store, and with a window its run's parked count (D60). */
  void unpark(long offset, PendingEvent event) {
    store.delete(offset);
    count--;
    if (runs != null) {
      runs.decided(event.runId());
    }
  }

  /** Whether {@code runId} has an event parked; only with a reorder window. */
  boolean hasRun(String runId) {
    return runs.has(runId);
  }
}
