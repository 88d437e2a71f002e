package dev.runlane.processor.dedup;

/** What happens to one event; the metric tags {@code outcome} and {@code layer} come from here. */
public enum Outcome {
  APPLY("applied", "store"),
  DUPLICATE_REDIS("duplicate", "redis"),
  DUPLICATE_STORE("duplicate", "store"),
  STALE("stale", "store"),
  /** The request id was taken first for another run: dead-lettered as {@code request_id_reused}. */
  REUSED("reused", "redis"),
  /**
   * As {@link #REUSED}, seen by the task's record of decided ids where Redis was not asked or could
   * not answer (D68).
   */
  REUSED_STORE("reused", "store"),
  /**
   * Newer than its run's state, held by the reorder window to be applied later in order with what
   * arrives meanwhile (D46). Never returned by the decision table: an APPLY the window defers.
   */
  HELD("held", "store"),
  /** Another task holds a live claim: decide again later (bounded by the claim TTL). */
  WAIT("waiting", "redis");

  private final String outcomeTag;
  private final String layerTag;

  Outcome(String outcomeTag, String layerTag) {
    this.outcomeTag = outcomeTag;
    this.layerTag = layerTag;
  }

  public String outcomeTag() {
    return outcomeTag;
  }

  public String layerTag() {
    return layerTag;
  }
}
