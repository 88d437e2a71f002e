package dev.runlane.processor.runs;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runlane.processor.dedup.Order;
import java.time.Instant;

/**
 * The state of one run after the last applied event: value of the run store and of {@code
 * sume.runs}. {@code updatedAt} is the receive time of that event, not the wall clock, so a replay
 * rebuilds byte-identical states (G4).
 */
public record RunState(
    @JsonProperty("run_id") String runId,
    @JsonProperty("last_request_id") String lastRequestId,
    @JsonProperty("last_created_at") Instant lastCreatedAt,
    @JsonProperty("last_type") String lastType,
    @JsonProperty("applied_count") long appliedCount,
    @JsonProperty("updated_at") Instant updatedAt,
    @JsonProperty("data") JsonNode data) {

  public RunState {
    // JSON null reads back as a NullNode; one representation keeps equality (and G4 checks) exact.
    if (data != null && data.isNull()) {
      data = null;
    }
  }

  /**
   * What ordering and applying an event need of the last state: all of it but its data, which the
   * run store's reader then never has to decode (D32).
   */
  public record Head(String lastRequestId, Instant lastCreatedAt, long appliedCount) {}

  public Head head() {
    return new Head(lastRequestId, lastCreatedAt, appliedCount);
  }

  /** Orders an event against the last applied one: (created_at, request_id), lexicographically. */
  public static Order order(Head current, Instant createdAt, String requestId) {
    if (current == null) {
      return Order.NEWER;
    }
    int byTime = createdAt.compareTo(current.lastCreatedAt());
    int cmp = byTime != 0 ? byTime : requestId.compareTo(current.lastRequestId());
    return cmp > 0 ? Order.NEWER : cmp == 0 ? Order.SAME : Order.OLDER;
  }

  /** The state after applying an event to {@code current} (which may be null). */
  public static RunState apply(
      Head current,
      String runId,
      String requestId,
      Instant createdAt,
      String type,
      Instant receivedAt,
      JsonNode data) {
    long count = current == null ? 1 : current.appliedCount() + 1;
    return new RunState(runId, requestId, createdAt, type, count, receivedAt, data);
  }
}
