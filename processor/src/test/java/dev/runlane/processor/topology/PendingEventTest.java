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
}
