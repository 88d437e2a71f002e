package dev.runlane.processor.runs;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;

/**
 * The JSON of a {@link RunState}: the same bytes in the run store, its changelog, {@code sume.runs}
 * and {@code /runs/{id}}, encoded once per new state.
 *
 * <p>The processor's hot path never builds a tree of an event's {@code data}: it reads only the
 * {@link RunState.Head} of the stored state and copies {@code data} verbatim from the event's body
 * into the next state (D32). {@link #toJson} and {@link #fromJson} are the general forms; for
 * compact data they produce and read the same bytes.
 */
public final class RunStateJson {
  static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .build();

  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);

  /** How {@link #toJson} ends a state without data. */
  private static final byte[] NULL_DATA_END = "\"data\":null}".getBytes(StandardCharsets.US_ASCII);

  private RunStateJson() {}

  public static byte[] toJson(RunState state) {
    try {
      return MAPPER.writeValueAsBytes(state);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static RunState fromJson(byte[] bytes) {
    try {
      return MAPPER.readValue(bytes, RunState.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The head of a stored state, read without decoding the rest: the parser stops once it has the
   * three fields (they come before {@code data}) and skips anything else without decoding it.
   */
  public static RunState.Head readHead(byte[] json) {
    String lastRequestId = null;
    Instant lastCreatedAt = null;
    long appliedCount = -1;
    try (JsonParser p = MAPPER.getFactory().createParser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalStateException("stored run state is not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        p.nextToken();
        switch (name) {
          case "last_request_id" -> lastRequestId = p.getText();
          case "last_created_at" -> lastCreatedAt = Instant.parse(p.getText());
          case "applied_count" -> appliedCount = p.getLongValue();
          default -> p.skipChildren();
        }
        if (lastRequestId != null && lastCreatedAt != null && appliedCount >= 0) {
          return new RunState.Head(lastRequestId, lastCreatedAt, appliedCount);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalStateException("stored run state lacks its head fields");
  }

  /**
   * The JSON of {@code next} (whose data must be null: it is not read) with the top-level {@code
   * data} member of {@code body} copied verbatim as its data, or {@code null} when the body has
   * none. Copying keeps the sender's formatting inside {@code data}: for a compact body the bytes
   * equal {@link #toJson} of the state with that data as a tree.
   *
   * @param body an event body that the envelope parser accepted (a well-formed JSON object)
   */
  public static byte[] withDataOf(RunState next, byte[] body) {
    if (next.data() != null) {
      throw new IllegalArgumentException("the state's data would be ignored");
    }
    byte[] head = toJson(next); // data is the record's last component: ...,"data":null}
    int tail = head.length - NULL_DATA_END.length;
    if (tail < 0
        || !Arrays.equals(head, tail, head.length, NULL_DATA_END, 0, NULL_DATA_END.length)) {
      throw new IllegalStateException("data is not the last member of the state's JSON");
    }
    ByteArrayBuilder out = new ByteArrayBuilder(head.length + body.length);
    out.write(head, 0, head.length - "null}".length()); // up to and with "data":
    try {
      writeDataOf(body, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.write('}');
    return out.toByteArray();
  }

  /**
   * Writes the value of the body's top-level {@code data} member, or {@code null} when there is
   * none. The whole body is read, so a broken one fails here as it did when it was read as a tree.
   */
  private static void writeDataOf(byte[] body, ByteArrayBuilder out) throws IOException {
    int start = -1;
    int end = -1;
    try (JsonParser p = MAPPER.getFactory().createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalStateException("event body is not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        boolean data = "data".equals(p.currentName());
        JsonToken value = p.nextToken();
        long valueStart = p.currentTokenLocation().getByteOffset();
        if (value == JsonToken.VALUE_STRING) {
          p.finishToken(); // strings are read lazily; the end is known once this one is read
        } else {
          p.skipChildren();
        }
        if (data) {
          start = (int) valueStart;
          end = (int) p.currentLocation().getByteOffset();
        }
      }
      if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
        throw new IllegalStateException("event body is not one JSON object");
      }
    }
    if (start < 0) {
      out.write(NULL);
    } else {
      out.write(body, start, end - start);
    }
  }
}
