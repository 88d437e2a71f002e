package dev.runlane.processor.dedup;

/**
 * What a task's own record of the request ids it decided within the dedup horizon says of an
 * event's id (D68). The record sits in the task's changelogged state and is written in the
 * decision's transaction, so it is true where a Redis marker may not be: it holds no decision that
 * aborted, and it answers when Redis does not.
 */
public enum Recorded {
  /** Decided for this event's run, to apply: applied, or held by the reorder window. */
  APPLIED,
  /** Decided stale for this event's run. */
  STALE,
  /** Decided for another run: this event reuses the id (D41). */
  OTHER_RUN,
  /** Not decided within the horizon: the record covers the whole horizon. */
  NONE,
  /**
   * Not in the record, which does not cover the whole horizon yet (it started less than a horizon
   * ago, with runs decided before it), or not asked.
   */
  UNKNOWN
}
