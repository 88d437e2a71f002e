package dev.runlane.processor.dedup;

/** Where an event stands against the last event applied to its run, by (created_at, request_id). */
public enum Order {
  /** Later than the last applied event, or the run has none yet. */
  NEWER,
  /** The very event last applied. */
  SAME,
  /** Earlier than the last applied event. */
  OLDER
}
