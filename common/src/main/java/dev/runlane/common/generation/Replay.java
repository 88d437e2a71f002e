package dev.runlane.common.generation;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Which input records a replaying generation re-derives silently, which it decides again and emits
 * marked, which it decides on its run store alone, and from where it is live, per partition.
 *
 * <p>Earlier generations emitted every record below {@code liveFrom} of its partition, except the
 * ones in {@code parked}: never decided for good (parked undecided in a pending store when their
 * generation stopped), so never emitted. Below {@code markedFrom} a record is re-applied to the run
 * store with no output; from {@code markedFrom} to {@code liveFrom}, its output is emitted again
 * with the {@link #HEADER} header. A rebuild has {@code markedFrom == liveFrom}.
 *
 * <p>Records the earlier generation read but never committed (the parked ones, and those from
 * {@code liveFrom} to {@code claimFrom}, the input's end when it stopped) may have been decided in
 * a transaction that aborted, whose Redis {@code done} marker outlived it (design.md §6.2). They
 * are decided on the run store alone and emitted as usual ({@link Range#UNCLAIMED}); only records
 * from {@code claimFrom} on, which no earlier generation saw, ask Redis (D35).
 *
 * @param id names the replay in the {@link #HEADER} header of what it emits again
 * @param from the time a reprocess starts at, or null for a rebuild
 * @param markedFrom per partition, the first offset decided again and emitted marked
 * @param liveFrom per partition, the first offset no earlier generation committed
 * @param claimFrom per partition, the first offset no earlier generation read
 * @param parked per partition, offsets below {@code liveFrom} never decided for good (kept sorted)
 * @param held per partition, those of {@code parked} that the earlier generation's reorder window
 *     held: decided against its run's head then, never emitted (D90)
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record Replay(
    @JsonProperty("id") String id,
    @JsonProperty("from") Instant from,
    @JsonProperty("marked_from") Map<Integer, Long> markedFrom,
    @JsonProperty("live_from") Map<Integer, Long> liveFrom,
    @JsonProperty("claim_from") Map<Integer, Long> claimFrom,
    @JsonProperty("parked") Map<Integer, List<Long>> parked,
    @JsonProperty("held") Map<Integer, List<Long>> held) {

  /** The header on every record a reprocess emits again: its value is the replay's id. */
  public static final String HEADER = "runlane.replay";

  /**
   * The header on an input record the tools copied from an older generation's input, which that
   * generation read but never decided for good: decided like {@link Range#UNCLAIMED}. Its value is
   * the generation that copied it.
   */
  public static final String UNDECIDED_HEADER = "runlane.undecided";

  /** What a replaying generation does with one input record. */
  public enum Range {
    /** Re-applied to the run store, nothing emitted: it was emitted before. */
    SILENT,
    /** Decided again and emitted, marked with {@link #HEADER}. */
    MARKED,
    /**
     * Read but never decided for good before: decided on the run store alone (a Redis marker may be
     * left by an aborted transaction) and emitted as usual.
     */
    UNCLAIMED,
    /** Never seen before: decided with Redis and emitted as usual. */
    LIVE;

    /** Whether the record is decided on the run store alone, without asking Redis. */
    public boolean storeAlone() {
      return this != LIVE;
    }

    /** Whether what is decided is emitted (marked or not). */
    public boolean emits() {
      return this != SILENT;
    }
  }

  public Replay {
    Objects.requireNonNull(id, "id");
    markedFrom = markedFrom == null ? Map.of() : Map.copyOf(markedFrom);
    liveFrom = liveFrom == null ? Map.of() : Map.copyOf(liveFrom);
    claimFrom = claimFrom == null ? Map.of() : Map.copyOf(claimFrom);
    parked = parked == null ? Map.of() : sortedOnce(parked);
    held = held == null ? Map.of() : sortedOnce(held);
  }

  /** A replay none of whose parked offsets is known to have been held by a reorder window. */
  public Replay(
      String id,
      Instant from,
      Map<Integer, Long> markedFrom,
      Map<Integer, Long> liveFrom,
      Map<Integer, Long> claimFrom,
      Map<Integer, List<Long>> parked) {
    this(id, from, markedFrom, liveFrom, claimFrom, parked, Map.of());
  }

  /**
   * Each partition's parked offsets sorted and without repeats, so that {@link #rangeOf} finds one
   * by binary search: a replay asks for every record it re-derives, and a stopped generation can
   * leave hundreds of thousands parked or held (D75).
   */
  private static Map<Integer, List<Long>> sortedOnce(Map<Integer, List<Long>> parked) {
    Map<Integer, List<Long>> sorted = new HashMap<>();
    parked.forEach((p, offsets) -> sorted.put(p, List.copyOf(new TreeSet<>(offsets))));
    return Map.copyOf(sorted);
  }

  /** The range of the record at {@code offset} of input partition {@code partition}. */
  public Range rangeOf(int partition, long offset) {
    long live = liveFrom.getOrDefault(partition, 0L);
    if (offset >= live) {
      return offset < claimFrom.getOrDefault(partition, live) ? Range.UNCLAIMED : Range.LIVE;
    }
    List<Long> parkedHere = parked.get(partition);
    if (parkedHere != null && Collections.binarySearch(parkedHere, offset) >= 0) {
      return Range.UNCLAIMED;
    }
    return offset >= markedFrom.getOrDefault(partition, live) ? Range.MARKED : Range.SILENT;
  }

  /** Whether the record at {@code offset} was emitted by an earlier generation. */
  public boolean emittedBefore(int partition, long offset) {
    Range r = rangeOf(partition, offset);
    return r == Range.SILENT || r == Range.MARKED;
  }

  /**
   * Whether no earlier generation decided the record at {@code offset}: it never read it, or it
   * stopped with it parked undecided (not held by its reorder window, which had decided it).
   */
  public boolean undecidedBefore(int partition, long offset) {
    Range r = rangeOf(partition, offset);
    if (r == Range.LIVE) {
      return true;
    }
    if (r != Range.UNCLAIMED) {
      return false;
    }
    List<Long> heldHere = held.get(partition);
    return heldHere == null || Collections.binarySearch(heldHere, offset) < 0;
  }

  /** Whether this replay is a reprocess (it emits some records again). */
  public boolean reprocess() {
    return from != null;
  }
}
