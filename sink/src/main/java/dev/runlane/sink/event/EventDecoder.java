package dev.runlane.sink.event;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Decodes a record of {@code sume.events} (key: run id; value: the webhook's body as received;
 * headers: the ingress's, plus {@code runlane.replay} on a re-emission) with the envelope parser
 * the processor decided it with, so that its request id, run id and {@code created_at} are the ones
 * the processor ordered by.
 */
public final class EventDecoder {

  /** Why a record was not stored. */
  public static final class UndecodableException extends Exception {
    private static final long serialVersionUID = 1L;

    UndecodableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** The decoded event and whether its data had to be left out. */
  public record Decoded(SinkEvent event, boolean dataUnstorable) {}

  private static final JsonFactory JSON = new JsonFactory();

  private static final Instant OLDEST_STORABLE = Instant.parse("0001-01-01T00:00:00Z");
  private static final Instant NEWEST_STORABLE = Instant.parse("9999-12-31T23:59:59.999999Z");

  // What the processor applied is stored as it is: PostgreSQL judges what it can hold, and what it
  // refuses is set aside (D61). The edge limits (D62) are the ingress's and the processor's.
  private final EnvelopeParser parser = EnvelopeParser.withoutStorageLimits();

  public Decoded decode(ConsumerRecord<String, byte[]> record) throws UndecodableException {
    if (record.value() == null) {
      throw new UndecodableException("no value", null);
    }
    Envelope envelope;
    try {
      envelope = parser.parse(record.value());
    } catch (EnvelopeException e) {
      throw new UndecodableException(e.getMessage(), e);
    }
    if (envelope.createdAt().isBefore(OLDEST_STORABLE)
        || !envelope.createdAt().isBefore(NEWEST_STORABLE)) {
      // RFC 3339 allows years 0000 and, with an offset, 10000; a timestamptz column does not take
      // them, and a row the database refuses would fail its batch for ever.
      throw new UndecodableException(
          "created_at " + envelope.createdAt() + " is outside what PostgreSQL stores", null);
    }
    String data;
    boolean unstorable = false;
    try {
      data = dataOf(record.value());
    } catch (IOException e) {
      throw new UndecodableException("unreadable data: " + e.getMessage(), e);
    } catch (UnstorableData e) {
      data = null;
      unstorable = true;
    }
    SinkEvent event =
        new SinkEvent(
            envelope.requestId(),
            envelope.runId(),
            envelope.createdAt(),
            envelope.type(),
            data,
            Instant.ofEpochMilli(record.timestamp()),
            RecordHeaders.get(record.headers(), Replay.HEADER),
            record);
    return new Decoded(event, unstorable);
  }

  /** The ingress's receipt time ({@code received_at}), or null when the record has none. */
  public static Instant receivedAt(ConsumerRecord<String, byte[]> record) {
    String millis = RecordHeaders.get(record.headers(), RecordHeaders.RECEIVED_AT);
    if (millis == null) {
      return null;
    }
    try {
      return Instant.ofEpochMilli(Long.parseLong(millis));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Thrown when the data holds what a {@code jsonb} refuses. */
  private static final class UnstorableData extends Exception {
    private static final long serialVersionUID = 1L;

    UnstorableData() {
      super(null, null, false, false);
    }
  }

  /**
   * The top-level {@code data} member's JSON text, verbatim, or null when there is none or it is
   * JSON null. PostgreSQL's {@code jsonb} refuses a string (or name) holding U+0000 or an unpaired
   * surrogate, both valid JSON escapes: such data throws {@link UnstorableData}, because one
   * unstorable value would otherwise fail its whole batch, for ever.
   */
  static String dataOf(byte[] body) throws IOException, UnstorableData {
    String data = null;
    boolean unstorable = false;
    try (JsonParser p = JSON.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("the body is not a JSON object");
      }
      // The last "data" member counts, as in the processor's copy of it into the run's state.
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        boolean isData = "data".equals(p.currentName());
        JsonToken value = p.nextToken();
        if (!isData) {
          p.skipChildren();
          continue;
        }
        int start = (int) p.currentTokenLocation().getByteOffset();
        unstorable = !storableValue(p, value);
        int end = (int) p.currentLocation().getByteOffset();
        data =
            value == JsonToken.VALUE_NULL
                ? null
                : new String(body, start, end - start, StandardCharsets.UTF_8);
      }
    }
    if (unstorable) {
      throw new UnstorableData();
    }
    return data;
  }

  /** Reads the value that starts at {@code first}; whether every string and name in it is. */
  private static boolean storableValue(JsonParser p, JsonToken first) throws IOException {
    boolean storable = true;
    int depth = 0;
    JsonToken t = first;
    while (true) {
      switch (t) {
        case START_OBJECT, START_ARRAY -> depth++;
        case END_OBJECT, END_ARRAY -> depth--;
        case FIELD_NAME, VALUE_STRING -> storable &= storable(p.getText());
        default -> {}
      }
      if (depth == 0) {
        return storable;
      }
      t = p.nextToken();
    }
  }

  private static boolean storable(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) {
        return false;
      }
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
