package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.RecordHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * One generation's books of the ledger (D88, D89): where each read stands, what waits to be
 * matched, and the counts since they were opened. {@link Ledger} reads the topics and hands each
 * decision and input record here.
 */
final class LedgerBooks {
  /** One input partition's running counts. */
  static final class Count {
    long received;
    long stillHeld;
    long unaccounted;
    final Map<Decision.Outcome, Long> decided = new EnumMap<>(Decision.Outcome.class);
  }

  final Generation generation;
  final Ledger.Since since;
  final Map<Integer, Long> from;
  final Map<Integer, Long> next;
  final Map<Integer, Long> logAt = new TreeMap<>();
  final LedgerOutputs outputs;
  final Map<Integer, Count> counts = new TreeMap<>();

  /** Decisions read whose input record is not audited yet, by input partition and offset. */
  final Map<Integer, NavigableMap<Long, List<Decision>>> pending = new HashMap<>();

  /** Audited input records held and not released yet, by input coordinates. */
  final Set<String> held = new HashSet<>();

  /** Released decisions of records held when audited, read since the last audit. */
  final List<Decision> lateReleases = new ArrayList<>();

  final List<Ledger.Unaccounted> named = new ArrayList<>();
  long unaccounted;

  LedgerBooks(
      Generation generation, Ledger.Since since, Map<Integer, Long> from, LedgerOutputs outputs) {
    this.generation = generation;
    this.since = since;
    this.from = new TreeMap<>(from);
    this.next = new TreeMap<>(from);
    this.outputs = outputs;
    from.keySet().forEach(p -> counts.put(p, new Count()));
  }

  /** A decision read from the log. */
  void decided(Decision d) {
    String at = d.input();
    int p = d.inputPartition();
    if (d.inputOffset() >= next.getOrDefault(p, 0L)) {
      pending
          .computeIfAbsent(p, k -> new TreeMap<>())
          .computeIfAbsent(d.inputOffset(), k -> new ArrayList<>(1))
          .add(d);
      return;
    }
    if (d.inputOffset() < from.getOrDefault(p, Long.MAX_VALUE)) {
      return; // below the floor: not audited
    }
    if (d.outcome() == Decision.Outcome.RELEASED && held.remove(at)) {
      // Its record was written with it, after the outputs were last read: taken once they are.
      lateReleases.add(d);
      return;
    }
    if (!d.decidesInput() && d.outcome() == Decision.Outcome.RE_DERIVED) {
      return; // a replay's silent release of a record it held: nothing written
    }
    unaccounted(
        d.inputPartition(),
        new Ledger.Unaccounted(
            at, d.runId(), d.requestId(), "decided again after its record was audited"));
  }

  /**
   * Takes the records of the held events released since the last audit, now that the outputs are
   * read past them, and sends each on to {@code sink} (null: no sink).
   */
  void releasedLate(SinkCheck sink) {
    for (Decision d : lateReleases) {
      counts.get(d.inputPartition()).stillHeld--;
      String missing = outputs.take(d);
      if (missing != null) {
        unaccounted(
            d.inputPartition(),
            new Ledger.Unaccounted(d.input(), d.runId(), d.requestId(), missing));
      } else if (sink != null && outputs.tookEvent()) {
        sink.applied(
            d.inputPartition(),
            d.input(),
            d,
            LedgerOutputs.partition(outputs.takenAt()),
            LedgerOutputs.offset(outputs.takenAt()));
      }
    }
    lateReleases.clear();
  }

  /**
   * Accounts for one input record. An applied event whose record is found goes on to {@code sink}
   * (null: no sink) to be found in the database.
   */
  void received(ConsumerRecord<byte[], byte[]> r, SinkCheck sink) {
    Count c = counts.get(r.partition());
    c.received++;
    String at = r.topic() + "/" + r.partition() + "/" + r.offset();
    String run = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
    String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
    NavigableMap<Long, List<Decision>> waiting = pending.get(r.partition());
    List<Decision> ds = waiting == null ? null : waiting.remove(r.offset());
    ds = ds == null ? List.of() : ds;
    List<Decision> primary = ds.stream().filter(Decision::decidesInput).toList();
    if (primary.size() != 1) {
      unaccounted(
          r.partition(),
          new Ledger.Unaccounted(
              at,
              run,
              id,
              primary.isEmpty()
                  ? "received, and no decision is recorded"
                  : "decided " + primary.size() + " times"));
      return;
    }
    Decision d = primary.get(0);
    c.decided.merge(d.outcome(), 1L, Long::sum);
    String missing = null;
    List<Decision> events = new ArrayList<>(1);
    List<Long> places = new ArrayList<>(1);
    for (Decision each : ds) {
      String why = outputs.take(each);
      if (why == null && outputs.tookEvent()) {
        events.add(each);
        places.add(outputs.takenAt());
      }
      missing = missing != null ? missing : why;
    }
    if (d.outcome() == Decision.Outcome.HELD
        && ds.stream().noneMatch(x -> x.outcome() == Decision.Outcome.RELEASED)) {
      c.stillHeld++;
      held.add(at);
    }
    if (missing != null) {
      // One reason an input record is unaccounted for is enough: the records it lacks first.
      unaccounted(r.partition(), new Ledger.Unaccounted(at, run, id, missing));
      return;
    }
    for (int i = 0; sink != null && i < events.size(); i++) {
      sink.applied(
          r.partition(),
          at,
          events.get(i),
          LedgerOutputs.partition(places.get(i)),
          LedgerOutputs.offset(places.get(i)));
    }
  }

  void unaccounted(int partition, Ledger.Unaccounted u) {
    counts.get(partition).unaccounted++;
    unaccounted++;
    if (named.size() < Ledger.NAMED) {
      named.add(u);
    }
  }
}
