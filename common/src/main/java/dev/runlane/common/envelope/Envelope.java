package dev.runlane.common.envelope;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * A webhook envelope: the fields runlane needs, plus the raw body exactly as received.
 *
 * <p>{@code raw} is not copied (this is on the hot path): treat it as immutable. {@link
 * #toString()} shows its length, never its content.
 *
 * @param requestId the dedup key, non-empty
 * @param runId the run the event belongs to (the Kafka key), non-empty
 * @param createdAt when the sender created the event (the order key)
 * @param type the event type, e.g. {@code run.completed}; null when absent
 * @param raw the body bytes as received
 */
public record Envelope(String requestId, String runId, Instant createdAt, String type, byte[] raw) {

  public Envelope {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(runId, "runId");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(raw, "raw");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Envelope e
        && requestId.equals(e.requestId)
        && runId.equals(e.runId)
        && createdAt.equals(e.createdAt)
        && Objects.equals(type, e.type)
        && Arrays.equals(raw, e.raw);
  }

  @Override
  public int hashCode() {
    return Objects.hash(requestId, runId, createdAt, type) * 31 + Arrays.hashCode(raw);
  }

  @Override
  public String toString() {
    return "Envelope[requestId="
        + requestId
        + ", runId="
        + runId
        + ", createdAt="
        + createdAt
        + ", type="
        + type
        + ", raw="
        + raw.length
        + " bytes]";
  }
}
