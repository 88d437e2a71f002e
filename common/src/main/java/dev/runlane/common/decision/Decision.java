package dev.runlane.common.decision;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One record of the decision log (design.md §6.8, D86): what the processor decided for one input
 * record, written in the transaction that wrote the decision's outputs, keyed by run id so that a
 * run's story is one partition. No body, no header but the ones named here, never a secret.
 *
 * @param requestId the envelope's request id, or null for a record that has none
 * @param runId the record's key (its run), or null for a record without one
 * @param inputTopic the generation's input topic the record was read from
 * @param inputPartition its partition
 * @param inputOffset its offset
 * @param generation the generation that decided (0, 1, ...)
 * @param replay the replay's id when the record lies in a range an earlier generation emitted
 * @param outcome what was decided
 * @param layer which part decided: {@code redis}, {@code batch}, {@code store}, {@code record},
 *     {@code window}, {@code intake}, {@code attempts}
 * @param reason the dead letter's reason, or for {@code re-derived} what was re-derived
 * @param output the topic the decision wrote its record to, or null. Its offset is not known inside
 *     the transaction that writes both (D86): the record is found by key and request id.
 * @param receivedAt when the ingress received the request (epoch ms), or null when unknown
 * @param decidedAt when the processor decided (epoch ms, the task's wall clock)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Decision(
    @JsonProperty("request_id") String requestId,
    @JsonProperty("run_id") String runId,
    @JsonProperty("input_topic") String inputTopic,
    @JsonProperty("input_partition") int inputPartition,
    @JsonProperty("input_offset") long inputOffset,
    @JsonProperty("generation") int generation,
    @JsonProperty("replay") String replay,
    @JsonProperty("outcome") Outcome outcome,
    @JsonProperty("layer") String layer,
    @JsonProperty("reason") String reason,
    @JsonProperty("output") String output,
    @JsonProperty("received_at") Long receivedAt,
    @JsonProperty("decided_at") long decidedAt) {

  private static final ObjectMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  /** What was decided for one input record; {@link #RELEASED} follows a {@link #HELD} one. */
  public enum Outcome {
    APPLIED("applied"),
    DUPLICATE("duplicate"),
    STALE("stale"),
    HELD("held"),
    /** A held event applied when its reorder window passed: a second record of its input. */
    RELEASED("released"),
    REUSED("reused"),
    DEAD_LETTERED("dead-lettered"),
    INVALID("invalid"),
    /** Decided again silently by a replay: an earlier generation emitted what it decided. */
    RE_DERIVED("re-derived");

    private final String tag;

    Outcome(String tag) {
      this.tag = tag;
    }

    @JsonValue
    public String tag() {
      return tag;
    }

    @JsonCreator
    public static Outcome of(String tag) {
      for (Outcome o : values()) {
        if (o.tag.equals(tag)) {
          return o;
        }
      }
      throw new IllegalArgumentException("no decision outcome '" + tag + "'");
    }

    /**
     * Whether this decides an input record (every input record has exactly one such decision); a
     * {@link #RELEASED} record completes a {@link #HELD} one.
     */
    public boolean decidesInput() {
      return this != RELEASED;
    }
  }

  /**
   * Whether this record decides its input record (each has exactly one such): all but a release,
   * also a release a replay re-derived silently (D35: its reason keeps what it re-derived).
   */
  public boolean decidesInput() {
    return outcome.decidesInput()
        && !(outcome == Outcome.RE_DERIVED && Outcome.RELEASED.tag().equals(reason));
  }

  /** The input record's coordinates, {@code <topic>/<partition>/<offset>}. */
  public String input() {
    return inputTopic + "/" + inputPartition + "/" + inputOffset;
  }

  /** This decision as the log's record value: compact JSON. */
  public byte[] toBytes() {
    try {
      return JSON.writeValueAsBytes(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a decision could not be written as JSON", e);
    }
  }

  /** A decision from a log record's value. */
  public static Decision parse(byte[] value) {
    try {
      return JSON.readValue(value, Decision.class);
    } catch (IOException e) {
      throw new UncheckedIOException("not a decision record: " + e.getMessage(), e);
    }
  }

  /** This decision as one JSON object, for {@code --json} output. */
  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a decision could not be written as JSON", e);
    }
  }
}
