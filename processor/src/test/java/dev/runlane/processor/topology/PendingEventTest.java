package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class PendingEventTest {

  @Test
  void roundTripsEveryFieldIncludingHeadersAndNulls() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("request_id", "req-1".getBytes(StandardCharsets.UTF_8));
    headers.add("empty", null);
    PendingEvent event =
        new PendingEvent(
            "run-ü",
            "req-1",
            Instant.parse("2026-11-29T10:00:00.123456789Z"),
            null,
            1_764_000_000_000L,
            headers,
            "{\"a\":1}".getBytes(StandardCharsets.UTF_8));

    PendingEvent back = PendingEvent.decode(PendingEvent.encode(event));

    assertThat(back.runId()).isEqualTo("run-ü");
    assertThat(back.requestId()).isEqualTo("req-1");
    assertThat(back.createdAt()).isEqualTo(event.createdAt());
    assertThat(back.type()).isNull();
    assertThat(back.timestamp()).isEqualTo(event.timestamp());
    assertThat(back.headers().lastHeader("request_id").value())
        .isEqualTo("req-1".getBytes(StandardCharsets.UTF_8));
    assertThat(back.headers().lastHeader("empty").value()).isNull();
    assertThat(back.raw()).isEqualTo(event.raw());
  }

  /**
   * Parked events outlive an upgrade in the pending store's changelog, so the layout must not move:
   * a version byte, then {@link java.io.DataOutputStream}'s big-endian fields, each string and byte
   * array led by its length (-1 for null).
   */
  @Test
  void theLayoutIsTheOneEarlierVersionsWrote() throws Exception {
    RecordHeaders headers = new RecordHeaders();
    headers.add("h", new byte[] {7});
    headers.add("n", null);
    Instant createdAt = Instant.parse("2026-11-29T10:00:00.5Z");
    byte[] raw = "{}".getBytes(StandardCharsets.UTF_8);
    PendingEvent event = new PendingEvent("run", "req", createdAt, "t", 42L, headers, raw);

    java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(expected)) {
      out.writeByte(1);
      for (String s : new String[] {"run", "req"}) {
        out.writeInt(s.length());
        out.writeBytes(s);
      }
      out.writeLong(createdAt.getEpochSecond());
      out.writeInt(createdAt.getNano());
      out.writeInt(1);
      out.writeBytes("t");
      out.writeLong(42L);
      out.writeInt(2);
      out.writeInt(1);
      out.writeBytes("h");
      out.writeInt(1);
      out.writeByte(7);
      out.writeInt(1);
      out.writeBytes("n");
      out.writeInt(-1);
      out.writeInt(raw.length);
      out.write(raw);
    }

    assertThat(PendingEvent.encode(event)).isEqualTo(expected.toByteArray());
    assertThat(PendingEvent.decode(expected.toByteArray()).raw()).isEqualTo(raw);
  }

  @Test
  void aTruncatedEventIsAnError() {
    byte[] whole =
        PendingEvent.encode(
            new PendingEvent(
                "run", "req", Instant.EPOCH, "t", 1L, new RecordHeaders(), new byte[3]));
    byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> PendingEvent.decode(cut))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("truncated");
  }
}
