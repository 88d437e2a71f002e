package dev.runlane.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.Test;

class RecordHeadersTest {

  @Test
  void putReplacesAndGetReadsLastValueAsUtf8() {
    Headers headers = kafkaHeaders();
    headers.add(RecordHeaders.SOURCE, "old".getBytes(StandardCharsets.UTF_8));

    RecordHeaders.put(headers, RecordHeaders.SOURCE, "sümé");

    assertThat(headers.headers(RecordHeaders.SOURCE)).hasSize(1);
    assertThat(RecordHeaders.get(headers, "source")).isEqualTo("sümé");
  }

  @Test
  void getReturnsLastOfSeveralValuesAndNullWhenAbsent() {
    Headers headers = kafkaHeaders();
    headers.add("x", "1".getBytes(StandardCharsets.UTF_8));
    headers.add("x", "2".getBytes(StandardCharsets.UTF_8));
    headers.add("n", null);

    assertThat(RecordHeaders.get(headers, "x")).isEqualTo("2");
    assertThat(RecordHeaders.get(headers, "n")).isNull();
    assertThat(RecordHeaders.get(headers, "absent")).isNull();
  }

  @Test
  void putNullRemoves() {
    Headers headers = kafkaHeaders();
    RecordHeaders.put(headers, "x", "1");

    RecordHeaders.put(headers, "x", null);

    assertThat(headers.lastHeader("x")).isNull();
  }

  @Test
  void namesAreStable() {
    assertThat(RecordHeaders.http("X-Sume-Signature")).isEqualTo("http.x-sume-signature");
    assertThat(RecordHeaders.DLQ_REASON).isEqualTo("dlq.reason");
    assertThat(RecordHeaders.RECEIVED_AT).isEqualTo("received_at");
  }

  private static Headers kafkaHeaders() {
    return new org.apache.kafka.common.header.internals.RecordHeaders();
  }
}
