package dev.runlane.processor.runs;

import com.fasterxml.jackson.core.JsonGenerator;
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
          .disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT)
          .build();

  private static final byte[] DATA_FIELD = ",\"data\":".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);

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
    try {
      ByteArrayBuilder out = new ByteArrayBuilder(body.length + 256);
      try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
        g.writeStartObject();
        g.writeStringField("run_id", next.runId());
        g.writeStringField("last_request_id", next.lastRequestId());
        g.writeStringField("last_created_at", next.lastCreatedAt().toString());
        g.writeStringField("last_type", next.lastType());
        g.writeNumberField("applied_count", next.appliedCount());
        g.writeStringField("updated_at", next.updatedAt().toString());
      } // the object stays open: its data member follows as bytes
      out.write(DATA_FIELD);
      long span = dataSpan(body);
      if (span < 0) {
        out.write(NULL);
      } else {
        int start = (int) (span >>> 32);
        out.write(body, start, (int) span - start);
      }
      out.write('}');
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Where the value of the body's top-level {@code data} member is, as start (high 32 bits) and end
   * (low 32 bits) byte offsets, or -1 when there is none. The whole body is read, so a broken one
   * fails here as it did when it was read as a tree.
   */
  static long dataSpan(byte[] body) throws IOException {
    long span = -1;
    try (JsonParser p = MAPPER.getFactory().createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalStateException("event body is not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        boolean data = "data".equals(p.currentName());
        JsonToken value = p.nextToken();
        long start = p.currentTokenLocation().getByteOffset();
        if (value == JsonToken.VALUE_STRING) {
          p.finishToken(); // strings are read lazily; the end is known once this one is read
        } else {
          p.skipChildren();
        }
        if (data) {
          span = start << 32 | p.currentLocation().getByteOffset();
        }
      }
      if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
        throw new IllegalStateException("event body is not one JSON object");
      }
    }
    return span;
  }
}
