package dev.runlane.processor.topology;

import dev.runlane.processor.runs.RunState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One task's events held by the reorder window (D46): decided, newer than what their run applied,
 * and not applied yet.
 *
 * <p>Which events are held lives in a changelogged store keyed by input offset, so that holding is
 * exactly-once like parking; the store keeps each event without its body and headers, which the
 * input topic holds at that offset already. Writing the body a second time to the changelog cost
 * more than a third of the processor's throughput (D49). The events themselves, bodies included,
 * are kept in memory with two indexes (by arrival, and by run in (created_at, request_id) order);
 * all are rebuilt when the task starts, the bodies read back from the input, and the cap on held
 * events bounds them.
 */
final class ReorderBuffer {
  /** A held event and the input offset it was read at. */
  record Held(long offset, PendingEvent event) {}

  /** A held event in the indexes; the event itself, body included, is kept here (D49). */
  private record Entry(long offset, PendingEvent event) {
    long arrival() {
      return event.timestamp();
    }
  }

  /** A run and a request id: the identity of one event of one run (D41). */
  private record Id(String runId, String requestId) {
    static Id of(PendingEvent event) {
      return new Id(event.runId(), event.requestId());
    }
  }

  private static final Comparator<Entry> BY_ARRIVAL =
      Comparator.comparingLong(Entry::arrival).thenComparingLong(Entry::offset);

  /** The order runs apply in, as {@link RunState#order} compares. */
  private static final Comparator<Entry> BY_ORDER =
      Comparator.comparing((Entry e) -> e.event().createdAt())
          .thenComparing(e -> e.event().requestId())
          .thenComparingLong(Entry::offset);

  private final KeyValueStore<Long, PendingEvent> store;
  private final NavigableSet<Entry> byArrival = new TreeSet<>(BY_ARRIVAL);
  private final NavigableSet<Long> offsets = new TreeSet<>();
  private final Map<String, NavigableSet<Entry>> byRun = new HashMap<>();
  private final Set<Id> heldIds = new HashSet<>();

  /**
   * Rebuilds the held events of the task reading {@code input} from its store, reading their bodies
   * back from the input.
   */
  ReorderBuffer(KeyValueStore<Long, PendingEvent> store, InputReader reader, TopicPartition input) {
    this.store = store;
    TreeMap<Long, PendingEvent> stored = new TreeMap<>();
    try (KeyValueIterator<Long, PendingEvent> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<Long, PendingEvent> kv = it.next();
        stored.put(kv.key, kv.value);
      }
    }
    if (stored.isEmpty()) {
      return;
    }
    Map<Long, ConsumerRecord<byte[], byte[]>> records =
        reader.read(input, stored.navigableKeySet());
    stored.forEach((offset, held) -> index(offset, withBody(input, offset, held, records)));
  }

  int size() {
    return byArrival.size();
  }

  /** Whether this very event (its run and request id) is held already: a copy is a duplicate. */
  boolean holds(PendingEvent event) {
    return heldIds.contains(Id.of(event));
  }

  void hold(long offset, PendingEvent event) {
    store.put(offset, event.withoutBody());
    index(offset, event);
  }

  /** When the earliest-arrived held event arrived (its record timestamp), if any is held. */
  long earliestArrival() {
    return byArrival.isEmpty() ? Long.MAX_VALUE : byArrival.first().arrival();
  }

  /** The run of the earliest-arrived held event; only while one is held. */
  String earliestRun() {
    return byArrival.first().event().runId();
  }

  /**
   * Takes out the earliest-arrived held event together with every held event of its run that is
   * older in (created_at, request_id), oldest first: applying it alone would make those stale,
   * though they are still within their window.
   */
  List<Held> releaseEarliest() {
    Entry earliest = byArrival.first();
    return releaseThrough(byRun.get(earliest.event().runId()), earliest);
  }

  /**
   * Takes out {@code runId}'s newest held event that {@code which} accepts together with every held
   * event of its run that is older in (created_at, request_id), oldest first; nothing if none is
   * accepted.
   */
  /** Whether any held event was read at an offset below {@code offset}. */
  boolean holdsBelow(long offset) {
    return !offsets.isEmpty() && offsets.first() < offset;
  }

  List<Held> releaseRunThrough(String runId, Predicate<Held> which) {
    NavigableSet<Entry> run = byRun.get(runId);
    if (run == null) {
      return List.of();
    }
    for (Entry e : run.descendingSet()) {
      if (which.test(new Held(e.offset(), e.event()))) {
        return releaseThrough(run, e);
      }
    }
    return List.of();
  }

  private List<Held> releaseThrough(NavigableSet<Entry> run, Entry last) {
    List<Held> out = new ArrayList<>();
    for (Entry e : new ArrayList<>(run.headSet(last, true))) {
      store.delete(e.offset());
      unindex(e);
      out.add(new Held(e.offset(), e.event()));
    }
    return out;
  }

  /**
   * The held event {@code stored} with its body and headers from the input record at its offset,
   * which must be the same event: the input is checked to be the one the store was built from when
   * a generation starts (D35), and this guards against anything that slipped through.
   */
  private static PendingEvent withBody(
      TopicPartition input,
      long offset,
      PendingEvent stored,
      Map<Long, ConsumerRecord<byte[], byte[]>> records) {
    ConsumerRecord<byte[], byte[]> record = records.get(offset);
    if (record == null
        || record.key() == null
        || !stored.runId().equals(new String(record.key(), StandardCharsets.UTF_8))) {
      throw new IllegalStateException(
          "the held event request_id="
              + stored.requestId()
              + " run_id="
              + stored.runId()
              + " is not at offset "
              + offset
              + " of "
              + input
              + " any more: the input changed under the processor's state");
    }
    return stored.withBody(record.headers(), record.value());
  }

  private void index(long offset, PendingEvent event) {
    Entry entry = new Entry(offset, event);
    byArrival.add(entry);
    offsets.add(offset);
    byRun.computeIfAbsent(event.runId(), r -> new TreeSet<>(BY_ORDER)).add(entry);
    heldIds.add(Id.of(event));
  }

  private void unindex(Entry entry) {
    byArrival.remove(entry);
    offsets.remove(entry.offset());
    NavigableSet<Entry> run = byRun.get(entry.event().runId());
    run.remove(entry);
    if (run.isEmpty()) {
      byRun.remove(entry.event().runId());
    }
    heldIds.remove(Id.of(entry.event()));
  }
}
