package dev.runlane.common.envelope;

import com.fasterxml.jackson.core.JsonPointer;
import java.util.List;
import java.util.Objects;

/**
 * Where the envelope fields are in the body, as JSON Pointers (RFC 6901).
 *
 * @param requestId pointer to the request id (required string)
 * @param createdAt pointer to the creation time (required RFC 3339 string with offset)
 * @param runId pointers to the run id, tried in order: the first one present (and not JSON null)
 *     wins
 * @param type pointer to the event type (optional string)
 */
public record EnvelopeFields(
    JsonPointer requestId, JsonPointer createdAt, List<JsonPointer> runId, JsonPointer type) {

  /** At most this many run id pointers (the parser tracks all pointers in one {@code int}). */
  public static final int MAX_RUN_ID_POINTERS = 16;

  public EnvelopeFields {
    requireNotRoot(requestId, "requestId");
    requireNotRoot(createdAt, "createdAt");
    requireNotRoot(type, "type");
    runId = List.copyOf(Objects.requireNonNull(runId, "runId"));
    if (runId.isEmpty() || runId.size() > MAX_RUN_ID_POINTERS) {
      throw new IllegalArgumentException(
          "runId needs 1 to " + MAX_RUN_ID_POINTERS + " pointers, got " + runId.size());
    }
    runId.forEach(p -> requireNotRoot(p, "runId"));
  }

  /**
   * {@code /request_id}, {@code /created_at}, [{@code /data/run_id}, {@code /run_id}], {@code
   * /type}.
   */
  public static EnvelopeFields defaults() {
    return of("/request_id", "/created_at", List.of("/data/run_id", "/run_id"), "/type");
  }

  /**
   * Compiles the pointers from their string form.
   *
   * @throws IllegalArgumentException if a pointer is not a valid JSON Pointer or is the root
   */
  public static EnvelopeFields of(
      String requestId, String createdAt, List<String> runId, String type) {
    return new EnvelopeFields(
        JsonPointer.compile(requestId),
        JsonPointer.compile(createdAt),
        runId.stream().map(JsonPointer::compile).toList(),
        JsonPointer.compile(type));
  }

  private static void requireNotRoot(JsonPointer pointer, String name) {
    Objects.requireNonNull(pointer, name);
    if (pointer.matches()) {
      throw new IllegalArgumentException(name + " must point into the body, not at its root");
    }
  }
}
