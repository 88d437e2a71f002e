package dev.runlane.processor.topology;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A decoded event parked in the changelogged pending store until its batch is decided.
 *
 * <p>It carries everything the decision needs, because a wall-clock punctuator sees only dummy
 * record metadata: the record timestamp and headers travel here, not in the context.
 */
record PendingEvent(
    String runId,
    String requestId,
    Instant createdAt,
    String type,
    long timestamp,
    Headers headers,
    byte[] raw) {

  private static final byte VERSION = 1;

  /** This event without its body and headers, as the held store keeps it (D49). */
  PendingEvent withoutBody() {
    return new PendingEvent(
        runId, requestId, createdAt, type, timestamp, new RecordHeaders(), null);
  }

  /** This event with the body and headers read back from its input record (D49). */
  PendingEvent withBody(Headers inputHeaders, byte[] body) {
    return new PendingEvent(runId, requestId, createdAt, type, timestamp, inputHeaders, body);
  }

  static final class PendingEventSerde implements Serde<PendingEvent> {
    @Override
    public Serializer<PendingEvent> serializer() {
      return (topic, event) -> event == null ? null : encode(event);
    }

    @Override
    public Deserializer<PendingEvent> deserializer() {
      return (topic, bytes) -> bytes == null ? null : decode(bytes);
    }
  }

  /**
   * One exact-size array, written in place: the body is most of it, and this runs once per event on
   * the stream thread (the layout is {@link java.io.DataOutputStream}'s, as before).
   */
  static byte[] encode(PendingEvent e) {
    byte[] runId = utf8(e.runId);
    byte[] requestId = utf8(e.requestId);
    byte[] type = utf8(e.type);
    Header[] headers = e.headers.toArray();
    byte[][] headerKeys = new byte[headers.length][];
    int size = 1 + sized(runId) + sized(requestId) + 8 + 4 + sized(type) + 8 + 4 + sized(e.raw);
    for (int i = 0; i < headers.length; i++) {
      headerKeys[i] = utf8(headers[i].key());
      size += sized(headerKeys[i]) + sized(headers[i].value());
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.put(VERSION);
    putBytes(out, runId);
    putBytes(out, requestId);
    out.putLong(e.createdAt.getEpochSecond());
    out.putInt(e.createdAt.getNano());
    putBytes(out, type);
    out.putLong(e.timestamp);
    out.putInt(headers.length);
    for (int i = 0; i < headers.length; i++) {
      putBytes(out, headerKeys[i]);
      putBytes(out, headers[i].value());
    }
    putBytes(out, e.raw);
    return out.array();
  }

  static PendingEvent decode(byte[] data) {
    try {
      ByteBuffer in = ByteBuffer.wrap(data);
      byte version = in.get();
      if (version != VERSION) {
        throw new IllegalStateException("unknown pending event version " + version);
      }
      String runId = getString(in);
      String requestId = getString(in);
      Instant createdAt = Instant.ofEpochSecond(in.getLong(), in.getInt());
      String type = getString(in);
      long timestamp = in.getLong();
      int count = in.getInt();
      Headers headers = new RecordHeaders();
      for (int i = 0; i < count; i++) {
        headers.add(getString(in), getBytes(in));
      }
      byte[] raw = getBytes(in);
      return new PendingEvent(runId, requestId, createdAt, type, timestamp, headers, raw);
    } catch (BufferUnderflowException ex) {
      throw new IllegalStateException("truncated pending event", ex);
    }
  }

  private static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private static int sized(byte[] b) {
    return 4 + (b == null ? 0 : b.length);
  }

  private static void putBytes(ByteBuffer out, byte[] b) {
    if (b == null) {
      out.putInt(-1);
    } else {
      out.putInt(b.length);
      out.put(b);
    }
  }

  private static String getString(ByteBuffer in) {
    byte[] b = getBytes(in);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static byte[] getBytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }
}
