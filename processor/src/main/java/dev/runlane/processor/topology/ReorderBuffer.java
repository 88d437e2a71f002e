package dev.runlane.processor.topology;

import dev.runlane.processor.runs.RunState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One task's events held by the reorder window (D46): decided, newer than what their run applied,
 * and not applied yet. They live in a changelogged store keyed by input offset, so that they are
 * exactly-once like the pending events; two in-memory indexes (by arrival, and by run in
 * (created_at, request_id) order) are rebuilt from it whenever the task starts, and bounded by the
 * cap on held events.
 */
final class ReorderBuffer {
  /** A held event and the input offset it was read at. */
  record Held(long offset, PendingEvent event) {}

  private record Entry(
      long arrival, String runId, Instant createdAt, String requestId, long offset) {}

  private static final Comparator<Entry> BY_ARRIVAL =
      Comparator.comparingLong(Entry::arrival).thenComparingLong(Entry::offset);

  /** The order runs apply in, as {@link RunState#order} compares. */
  private static final Comparator<Entry> BY_ORDER =
      Comparator.comparing(Entry::createdAt)
          .thenComparing(Entry::requestId)
          .thenComparingLong(Entry::offset);

  private final KeyValueStore<Long, PendingEvent> store;
  private final NavigableSet<Entry> byArrival = new TreeSet<>(BY_ARRIVAL);
  private final Map<String, NavigableSet<Entry>> byRun = new HashMap<>();
  private final Map<String, Long> heldIds = new HashMap<>(); // run + request id -> offset

  ReorderBuffer(KeyValueStore<Long, PendingEvent> store) {
    this.store = store;
    try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<Long, PendingEvent> kv = it.next();
        index(kv.key, kv.value);
      }
    }
  }

  int size() {
    return byArrival.size();
  }

  /** Whether this very event (its run and request id) is held already: a copy is a duplicate. */
  boolean holds(PendingEvent event) {
    return heldIds.containsKey(idOf(event));
  }

  void hold(long offset, PendingEvent event) {
    store.put(offset, event);
    index(offset, event);
  }

  /** When the earliest-arrived held event arrived (its record timestamp), if any is held. */
  long earliestArrival() {
    return byArrival.isEmpty() ? Long.MAX_VALUE : byArrival.first().arrival();
  }

  /**
   * Takes out the earliest-arrived held event together with every held event of its run that is
   * older in (created_at, request_id), oldest first: applying it alone would make those stale,
   * though they are still within their window.
   */
  List<Held> releaseEarliest() {
    Entry earliest = byArrival.first();
    NavigableSet<Entry> run = byRun.get(earliest.runId());
    List<Held> out = new ArrayList<>();
    for (Entry e : new ArrayList<>(run.headSet(earliest, true))) {
      PendingEvent event = store.get(e.offset());
      store.delete(e.offset());
      unindex(e, event);
      out.add(new Held(e.offset(), event));
    }
    return out;
  }

  private void index(long offset, PendingEvent event) {
    Entry entry =
        new Entry(event.timestamp(), event.runId(), event.createdAt(), event.requestId(), offset);
    byArrival.add(entry);
    byRun.computeIfAbsent(event.runId(), r -> new TreeSet<>(BY_ORDER)).add(entry);
    heldIds.put(idOf(event), offset);
  }

  private void unindex(Entry entry, PendingEvent event) {
    byArrival.remove(entry);
    NavigableSet<Entry> run = byRun.get(event.runId());
    run.remove(entry);
    if (run.isEmpty()) {
      byRun.remove(event.runId());
    }
    heldIds.remove(idOf(event));
  }

  private static String idOf(PendingEvent event) {
    return event.runId() + '\u0000' + event.requestId();
  }
}
