package dev.runlane.processor.topology;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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

  static byte[] encode(PendingEvent e) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(e.raw.length + 256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      writeString(out, e.runId);
      writeString(out, e.requestId);
      out.writeLong(e.createdAt.getEpochSecond());
      out.writeInt(e.createdAt.getNano());
      writeString(out, e.type);
      out.writeLong(e.timestamp);
      Header[] headers = e.headers.toArray();
      out.writeInt(headers.length);
      for (Header h : headers) {
        writeString(out, h.key());
        writeBytes(out, h.value());
      }
      writeBytes(out, e.raw);
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
    return bytes.toByteArray();
  }

  static PendingEvent decode(byte[] data) {
    try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(data))) {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new IllegalStateException("unknown pending event version " + version);
      }
      String runId = readString(in);
      String requestId = readString(in);
      Instant createdAt = Instant.ofEpochSecond(in.readLong(), in.readInt());
      String type = readString(in);
      long timestamp = in.readLong();
      int count = in.readInt();
      Headers headers = new RecordHeaders();
      for (int i = 0; i < count; i++) {
        headers.add(readString(in), readBytes(in));
      }
      byte[] raw = readBytes(in);
      return new PendingEvent(runId, requestId, createdAt, type, timestamp, headers, raw);
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    writeBytes(out, s == null ? null : s.getBytes(StandardCharsets.UTF_8));
  }

  private static String readString(DataInputStream in) throws IOException {
    byte[] b = readBytes(in);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
    if (b == null) {
      out.writeInt(-1);
    } else {
      out.writeInt(b.length);
      out.write(b);
    }
  }

  private static byte[] readBytes(DataInputStream in) throws IOException {
    int n = in.readInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }
}
