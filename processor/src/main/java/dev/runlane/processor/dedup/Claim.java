package dev.runlane.processor.dedup;

/**
 * What Redis held for a request id when this task tried to claim it, seen from this task.
 *
 * <p>A claim is taken with {@code SET key processing:<owner>@<run> NX EX}; the value read back
 * tells whether the key was new, already done, or being processed, by whom, and for which run
 * ({@link MarkerValues}).
 */
public enum Claim {
  /** The key did not exist: this task now holds a fresh {@code processing} claim. */
  NEW,
  /** Another task marked it done. */
  DONE_BY_OTHER,
  /** This task marked it done earlier; the attempt may have aborted since (design.md §6.2). */
  DONE_BY_THIS_TASK,
  /**
   * This task decided it stale earlier; the attempt may have aborted since, taking its record in
   * the stale stream with it: decide it again on the run store, so it is listed again (D40).
   */
  STALE_BY_THIS_TASK,
  /** A claim of this task, left by a dead earlier attempt (zombies are fenced). */
  PROCESSING_BY_THIS_TASK,
  /** Another task holds a live claim. */
  PROCESSING_BY_OTHER,
  /** Seen earlier in the same batch: the first copy holds this task's fresh claim. */
  EARLIER_IN_BATCH,
  /**
   * The id was taken first for another run: by a marker or claim that names another run, or by an
   * earlier copy in the same batch that did. A request id names one event of one run, so this copy
   * is dead-lettered, whatever its own run holds (D41).
   */
  OTHER_RUN,
  /** Redis could not be asked; decide on the run store alone. */
  UNAVAILABLE,
  /**
   * The key holds a value that is neither a claim nor a done marker (an older format, or another
   * deployment sharing the key prefix): decide on the run store alone and never overwrite it,
   * rather than read it as another task's done and drop the event.
   */
  UNKNOWN_MARKER,
  /**
   * Not asked: a replaying generation re-derives an event that an earlier generation decided, and
   * decides it on the run store alone, so that no Redis marker of any generation can skew it (D35).
   */
  REPLAY;

  /**
   * Whether this task holds a {@code processing} claim on the key, which it gives back (compare and
   * delete) if it does not decide the event.
   */
  public boolean releasable() {
    return this == NEW || this == PROCESSING_BY_THIS_TASK;
  }

  /** Whether this task holds the key after the claim, so it must mark it done afterwards. */
  public boolean heldByThisTask() {
    return releasable() || this == DONE_BY_THIS_TASK || this == STALE_BY_THIS_TASK;
  }
}
