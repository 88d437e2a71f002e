package dev.runlane.common.envelope;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * Sume run events as Sume sends them, for the local simulator, the bench and the tests: one place
 * that writes the envelope the parser reads ({@link EnvelopeFields#defaults()}), with Jackson, so
 * no caller concatenates JSON by hand.
 *
 * <pre>{@code
 * byte[] body = SumeEvents.event("run-1", "req-1", createdAt).type("run.updated").data("seq", 3).bytes();
 * // {"request_id":"req-1","created_at":"...","type":"run.updated","data":{"run_id":"run-1","seq":3}}
 * }</pre>
 *
 * <p>Fields are written in a fixed order: {@code request_id}, {@code created_at}, {@code type}
 * (when set), then {@code data} with {@code run_id} first and the other data fields in the order
 * given. The same builder state always gives the same bytes, so a retry or a duplicate delivery can
 * send them again unchanged. Malformed bodies (broken syntax, missing fields, other charsets) are
 * what tests of the parser write by hand; this class only writes well-formed envelopes.
 */
public final class SumeEvents {
  private static final ObjectMapper JSON = JsonMapper.builder().build();

  private SumeEvents() {}

  /** An event of run {@code runId} with the dedup key {@code requestId}, created at that time. */
  public static Event event(String runId, String requestId, Instant createdAt) {
    return new Event(runId, requestId, createdAt.toString());
  }

  /**
   * As {@link #event(String, String, Instant)}, with {@code created_at} written as given: for tests
   * of timestamps an {@link Instant} cannot hold (an offset other than Z, a bad date).
   */
  public static Event event(String runId, String requestId, String createdAt) {
    return new Event(runId, requestId, createdAt);
  }

  /** One envelope being built; not thread-safe. */
  public static final class Event {
    private final String runId;
    private final String requestId;
    private final String createdAt;
    private String type;
    private final Map<String, Object> data = new LinkedHashMap<>();
    private String padField;
    private int padTo;
    private IntFunction<String> filler;

    private Event(String runId, String requestId, String createdAt) {
      this.runId = Objects.requireNonNull(runId, "runId");
      this.requestId = Objects.requireNonNull(requestId, "requestId");
      this.createdAt = Objects.requireNonNull(createdAt, "createdAt");
    }

    /** {@code /type}, e.g. {@code run.completed}; absent unless set. */
    public Event type(String type) {
      this.type = Objects.requireNonNull(type, "type");
      return this;
    }

    /**
     * A field of {@code /data} after {@code run_id}: a string, number, boolean, or anything Jackson
     * writes as a value.
     */
    public Event data(String name, Object value) {
      if (name.equals("run_id")) {
        throw new IllegalArgumentException("run_id is the event's run; pass it to event()");
      }
      data.put(name, value);
      return this;
    }

    /**
     * Pads the body to exactly {@code size} bytes with {@code /data/<field>} made of {@code x}; a
     * body already that long or longer is left as it is (the field is then empty).
     */
    public Event paddedTo(int size, String field) {
      return paddedTo(size, field, n -> "x".repeat(n));
    }

    /**
     * Pads the body to {@code size} bytes with {@code /data/<field>}, its text from {@code filler}:
     * given the number of characters that would make the body exactly {@code size} bytes, it
     * returns at most that many, each one JSON writes as one byte (e.g. Base64, for a body that
     * does not compress).
     */
    public Event paddedTo(int size, String field, IntFunction<String> filler) {
      data(field, "");
      this.padField = field;
      this.padTo = size;
      this.filler = Objects.requireNonNull(filler, "filler");
      return this;
    }

    /** The envelope as UTF-8 bytes: the body Sume would POST. */
    public byte[] bytes() {
      byte[] unpadded = write();
      int missing = padTo - unpadded.length;
      if (padField == null || missing <= 0) {
        return unpadded;
      }
      String pad = filler.apply(missing);
      data.put(padField, pad);
      byte[] padded = write();
      data.put(padField, "");
      if (pad.length() > missing || padded.length != unpadded.length + pad.length()) {
        throw new IllegalArgumentException(
            "the filler gave "
                + pad.length()
                + " characters for "
                + missing
                + " bytes; each must write as one byte");
      }
      return padded;
    }

    /** The envelope as a string, for a caller that encodes it itself. */
    public String json() {
      return new String(bytes(), StandardCharsets.UTF_8);
    }

    private byte[] write() {
      ObjectNode root = JSON.createObjectNode();
      root.put("request_id", requestId);
      root.put("created_at", createdAt);
      if (type != null) {
        root.put("type", type);
      }
      ObjectNode body = root.putObject("data");
      body.put("run_id", runId);
      data.forEach((name, value) -> body.set(name, JSON.valueToTree(value)));
      try {
        return JSON.writeValueAsBytes(root);
      } catch (JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
