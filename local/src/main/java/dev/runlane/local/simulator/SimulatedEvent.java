package dev.runlane.local.simulator;

import dev.runlane.common.envelope.SumeEvents;
import java.time.Instant;

/**
 * One Sume run event as the simulator sends it: the envelope fields the pipeline reads, and the
 * exact body bytes (the same bytes on every attempt and every duplicate delivery).
 *
 * @param runId the run ({@code /data/run_id}, the Kafka key)
 * @param requestId the dedup key ({@code /request_id})
 * @param createdAt the order key ({@code /created_at})
 * @param type e.g. {@code run.started}
 * @param seq position of the event in its run, from 0, in created_at order
 */
public record SimulatedEvent(
    String runId, String requestId, Instant createdAt, String type, int seq) {

  /** The JSON envelope, with the event's position and status in its data. */
  public byte[] body() {
    return SumeEvents.event(runId, requestId, createdAt)
        .type(type)
        .data("seq", seq)
        .data("status", type.substring(type.indexOf('.') + 1))
        .bytes();
  }

  /**
   * Whether this event is newer than {@code other} for the pipeline: by (created_at, request_id).
   */
  public boolean isNewerThan(SimulatedEvent other) {
    int byTime = createdAt.compareTo(other.createdAt);
    return byTime != 0 ? byTime > 0 : requestId.compareTo(other.requestId) > 0;
  }
}
