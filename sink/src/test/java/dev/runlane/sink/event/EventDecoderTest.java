package dev.runlane.sink.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class EventDecoderTest {
  private final EventDecoder decoder = new EventDecoder();

  private static ConsumerRecord<String, byte[]> record(String body) {
    return new ConsumerRecord<>(
        "sume.events", 3, 42L, "run-1", body.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void readsTheEnvelopeAndCopiesDataVerbatim() throws Exception {
    var d =
        decoder.decode(
            record(
                "{\"request_id\":\"r1\",\"created_at\":\"2026-11-29T10:00:00.123456789Z\","
                    + "\"type\":\"run.started\",\"data\":{\"run_id\":\"run-1\", \"n\": [1, 2.50]}}"));
    SinkEvent e = d.event();
    assertThat(d.dataUnstorable()).isFalse();
    assertThat(e.requestId()).isEqualTo("r1");
    assertThat(e.runId()).isEqualTo("run-1");
    assertThat(e.type()).isEqualTo("run.started");
    assertThat(e.data()).isEqualTo("{\"run_id\":\"run-1\", \"n\": [1, 2.50]}");
    assertThat(e.createdAtMicros()).isEqualTo(Instant.parse("2026-11-29T10:00:00.123456Z"));
    assertThat(e.createdAtNanos()).isEqualTo(123_456_789);
    assertThat(e.partition()).isEqualTo(3);
    assertThat(e.offset()).isEqualTo(42);
  }

  @Test
  void dataThatJsonbCannotHoldIsLeftOutAndSaidSo() throws Exception {
    for (String bad : new String[] {"\"a\\u0000b\"", "{\"x\":\"\\ud800\"}", "{\"\\u0000\":1}"}) {
      var d =
          decoder.decode(
              record(
                  "{\"request_id\":\"r1\",\"created_at\":\"2026-11-29T10:00:00Z\",\"run_id\":\"run-1\","
                      + "\"data\":"
                      + bad
                      + "}"));
      assertThat(d.dataUnstorable()).as(bad).isTrue();
      assertThat(d.event().data()).isNull();
    }
  }

  @Test
  void aCreatedAtPostgresCannotStoreIsNoStorableEvent() throws Exception {
    for (String at : new String[] {"0000-06-01T00:00:00Z", "9999-12-31T23:59:59-01:00"}) {
      String body = "{\"request_id\":\"r1\",\"created_at\":\"" + at + "\",\"run_id\":\"run-1\"}";
      assertThatThrownBy(() -> decoder.decode(record(body)))
          .as(at)
          .isInstanceOf(EventDecoder.UndecodableException.class)
          .hasMessageContaining("outside what PostgreSQL stores");
    }
    String edge =
        "{\"request_id\":\"r1\",\"created_at\":\"9999-12-31T23:59:59Z\",\"run_id\":\"u\"}";
    assertThat(decoder.decode(record(edge)).event().createdAt())
        .isEqualTo(Instant.parse("9999-12-31T23:59:59Z"));
  }

  @Test
  void jsonNullDataAndNoDataAreBothNull() throws Exception {
    String head = "{\"request_id\":\"r1\",\"created_at\":\"2026-11-29T10:00:00Z\",\"run_id\":\"u\"";
    assertThat(decoder.decode(record(head + ",\"data\":null}")).event().data()).isNull();
    assertThat(decoder.decode(record(head + "}")).event().data()).isNull();
  }

  @Test
  void aRecordThatIsNoEnvelopeIsUndecodable() {
    assertThatThrownBy(() -> decoder.decode(record("{\"type\":\"x\"}")))
        .isInstanceOf(EventDecoder.UndecodableException.class);
  }

  @Test
  void requestIdsOrderByCodePointAsPostgresCollationC() {
    // U+FF61 sorts before U+1F600 by code point, after it in UTF-16 (a surrogate is 0xD83D).
    String bmp = "\uFF61";
    String astral = "\uD83D\uDE00";
    assertThat(bmp.compareTo(astral)).isPositive();
    assertThat(SinkEvent.compareCodePoints(bmp, astral)).isNegative();
    assertThat(SinkEvent.compareCodePoints("a", "ab")).isNegative();
    assertThat(SinkEvent.compareCodePoints("B", "c")).isNegative();
  }
}
