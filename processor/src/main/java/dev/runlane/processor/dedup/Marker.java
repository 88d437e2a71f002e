package dev.runlane.processor.dedup;

/**
 * A done marker a task owes for an event it decided.
 *
 * @param stale whether the event was decided stale, which the marker says so that an aborted
 *     attempt lists it again (D40)
 */
public record Marker(EventKey event, boolean stale) {
  public String requestId() {
    return event.requestId();
  }
}
