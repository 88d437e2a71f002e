package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The sink's part of the ledger (D94): every applied (or released) event whose record in the events
 * topic lies below the sink's next offset of its partition has its row in {@code processed_events},
 * found by its request id. The sink writes rows and next offset in one transaction, so below the
 * offset a row missing is a loss; past it the event is not yet in the sink. A record the sink set
 * aside ({@code sink_rejected}) or an operator accepted as never stored ({@code sink_gaps}) is
 * accounted for by that record. The rows are asked for in batches, as the scan goes.
 */
public final class SinkCheck {
  /**
   * The sink's balance.
   *
   * @param withRow applied events below the sink's position that have their row
   * @param notYet applied events past the sink's position: not yet in the sink
   * @param setAside applied events the sink set aside in {@code sink_rejected}
   * @param inGap applied events in a range accepted in {@code sink_gaps}
   * @param missing applied events below the sink's position without their row: unaccounted
   */
  public record Balance(
      String table,
      String database,
      String group,
      long withRow,
      long notYet,
      long setAside,
      long inGap,
      long missing) {}

  private record Pending(int inputPartition, Ledger.Unaccounted ifMissing) {}

  private final SinkRows rows;
  private final Map<Integer, Long> positions;
  private final Set<String> rejected;
  private final List<SinkRows.Gap> gaps;
  private final BiConsumer<Integer, Ledger.Unaccounted> lost;
  private final Map<String, List<Pending>> pending = new LinkedHashMap<>();
  private long withRow;
  private long notYet;
  private long setAside;
  private long inGap;
  private long missing;

  /**
   * Reads the sink's progress now; the rows asked for later were committed with it or before.
   *
   * @param lost told of each applied event without its row, with its input partition
   */
  SinkCheck(SinkRows rows, BiConsumer<Integer, Ledger.Unaccounted> lost) {
    this.rows = rows;
    this.positions = rows.positions();
    this.rejected = rows.rejected();
    this.gaps = rows.gaps();
    this.lost = lost;
  }

  /**
   * One applied or released decision whose record is at {@code eventPartition}/{@code eventOffset}
   * of the events topic.
   */
  void applied(int inputPartition, String input, Decision d, int eventPartition, long eventOffset) {
    Long next = positions.get(eventPartition);
    if (next == null || eventOffset >= next) {
      notYet++;
    } else if (rejected.contains(eventPartition + "/" + eventOffset)) {
      setAside++;
    } else if (gaps.stream().anyMatch(g -> g.holds(eventPartition, eventOffset))) {
      inGap++;
    } else {
      pending
          .computeIfAbsent(String.valueOf(d.requestId()), k -> new ArrayList<>(1))
          .add(
              new Pending(
                  inputPartition,
                  new Ledger.Unaccounted(
                      input,
                      d.runId(),
                      d.requestId(),
                      d.outcome().tag() + ", and its row is not in " + SinkRows.TABLE)));
      if (pending.size() >= SinkRows.BATCH) {
        flush();
      }
    }
  }

  /** Asks for the rows of the events waiting; tells {@code lost} of those without one. */
  void flush() {
    if (pending.isEmpty()) {
      return;
    }
    Set<String> without = rows.missing(pending.keySet());
    pending.forEach(
        (id, events) -> {
          if (without.contains(id)) {
            missing += events.size();
            events.forEach(e -> lost.accept(e.inputPartition(), e.ifMissing()));
          } else {
            withRow += events.size();
          }
        });
    pending.clear();
  }

  /** The balance, once {@link #flush()}ed at the end of the scan. */
  Balance balance() {
    return new Balance(
        SinkRows.TABLE, rows.database(), rows.group(), withRow, notYet, setAside, inGap, missing);
  }
}
