package dev.runlane.common.generation;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which input records a replaying generation re-derives silently, which it decides again and emits
 * marked, and from where it is live, per partition.
 *
 * <p>The earlier generation emitted every record it decided; those are below {@code liveFrom} of
 * their partition, except the ones still parked undecided in its pending store when it stopped
 * ({@code parked}): those were never emitted, so they are live. Below {@code markedFrom} a record
 * is re-applied to the run store with no output (it was emitted before); from {@code markedFrom} to
 * {@code liveFrom}, its output is emitted again with the {@link #HEADER} header. A rebuild has
 * {@code markedFrom == liveFrom} (D35).
 *
 * @param id names the replay in the {@link #HEADER} header of what it emits again
 * @param from the time a reprocess starts at, or null for a rebuild
 * @param markedFrom per partition, the first offset decided again and emitted marked
 * @param liveFrom per partition, the first offset the earlier generation had not committed
 * @param parked per partition, offsets below {@code liveFrom} that were parked undecided
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record Replay(
    @JsonProperty("id") String id,
    @JsonProperty("from") Instant from,
    @JsonProperty("marked_from") Map<Integer, Long> markedFrom,
    @JsonProperty("live_from") Map<Integer, Long> liveFrom,
    @JsonProperty("parked") Map<Integer, List<Long>> parked) {

  /** The header on every record a reprocess emits again: its value is the replay's id. */
  public static final String HEADER = "runlane.replay";

  /** What a replaying generation does with one input record. */
  public enum Range {
    /** Re-applied to the run store, nothing emitted: it was emitted before. */
    SILENT,
    /** Decided again and emitted, marked with {@link #HEADER}. */
    MARKED,
    /** Never decided before: decided and emitted as usual. */
    LIVE
  }

  public Replay {
    Objects.requireNonNull(id, "id");
    markedFrom = markedFrom == null ? Map.of() : Map.copyOf(markedFrom);
    liveFrom = liveFrom == null ? Map.of() : Map.copyOf(liveFrom);
    parked = parked == null ? Map.of() : Map.copyOf(parked);
  }

  /** The range of the record at {@code offset} of input partition {@code partition}. */
  public Range rangeOf(int partition, long offset) {
    Long live = liveFrom.get(partition);
    if (live == null || offset >= live) {
      return Range.LIVE;
    }
    List<Long> parkedHere = parked.get(partition);
    if (parkedHere != null && parkedHere.contains(offset)) {
      return Range.LIVE;
    }
    return offset >= markedFrom.getOrDefault(partition, live) ? Range.MARKED : Range.SILENT;
  }

  /** Whether this replay is a reprocess (it emits some records again). */
  public boolean reprocess() {
    return from != null;
  }
}
