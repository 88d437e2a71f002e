package dev.runlane.processor.topology;

import dev.runlane.common.generation.Replay;
import org.apache.kafka.common.header.Headers;

/**
 * How one task decides and emits each input record: by the generation's replay ranges, and as
 * read-but-undecided when the tools copied it from an older generation's input (D35).
 */
final class ReplayRanges {
  private final TopologySettings settings;
  private final int partition;

  ReplayRanges(TopologySettings settings, int partition) {
    this.settings = settings;
    this.partition = partition;
  }

  /** The range of the input record at {@code offset} with {@code headers}. */
  Replay.Range of(long offset, Headers headers) {
    Replay.Range range = settings.rangeOf(partition, offset);
    if (range == Replay.Range.LIVE
        && settings.readsCopies()
        && headers.lastHeader(Replay.UNDECIDED_HEADER) != null) {
      return Replay.Range.UNCLAIMED;
    }
    return range;
  }

  /**
   * Whether the generation replays and no earlier generation decided the record at {@code offset}
   * (in {@code range}): it never read it, or it stopped with it parked undecided (D90).
   */
  boolean undecidedBefore(long offset, Replay.Range range) {
    Replay replay = settings.replay();
    return replay != null
        && (range == Replay.Range.LIVE || range == Replay.Range.UNCLAIMED)
        && replay.undecidedBefore(partition, offset);
  }

  /**
   * The first offset of this task's partition no earlier generation emitted: below it a record may
   * have been emitted before; 0 without a replay.
   */
  long emittedBelow() {
    Replay replay = settings.replay();
    return replay == null ? 0 : replay.liveFrom().getOrDefault(partition, 0L);
  }

  /**
   * Whether an earlier generation emitted what it decided from the record at {@code offset}: this
   * one re-derives it silently or emits it again marked.
   */
  boolean emittedBefore(long offset, Headers headers) {
    Replay.Range range = of(offset, headers);
    return range == Replay.Range.SILENT || range == Replay.Range.MARKED;
  }
}
