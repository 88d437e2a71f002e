package dev.runlane.processor.runs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runlane.processor.dedup.Order;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RunStateTest {
  private static final Instant T = Instant.parse("2026-11-29T10:00:00Z");
  private final RunState last = new RunState("run-1", "req-m", T, "run.started", 3, T, null);

  @Test
  void theFirstEventOfARunIsNewer() {
    assertThat(RunState.order(null, T, "req-a")).isEqualTo(Order.NEWER);
  }

  @Test
  void ordersByCreatedAtFirst() {
    assertThat(RunState.order(last, T.plusMillis(1), "req-a")).isEqualTo(Order.NEWER);
    assertThat(RunState.order(last, T.minusMillis(1), "req-z")).isEqualTo(Order.OLDER);
  }

  @Test
  void breaksTiesByRequestId() {
    assertThat(RunState.order(last, T, "req-n")).isEqualTo(Order.NEWER);
    assertThat(RunState.order(last, T, "req-a")).isEqualTo(Order.OLDER);
    assertThat(RunState.order(last, T, "req-m")).isEqualTo(Order.SAME);
  }

  @Test
  void applyingCountsAndKeepsTheEventsFields() throws Exception {
    var data = new ObjectMapper().readTree("{\"status\":\"ok\"}");
    RunState next = RunState.apply(last, "run-1", "req-n", T.plusSeconds(1), "run.done", T, data);
    assertThat(next.appliedCount()).isEqualTo(4);
    assertThat(next.lastRequestId()).isEqualTo("req-n");
    assertThat(next.lastType()).isEqualTo("run.done");
    assertThat(next.data().get("status").asText()).isEqualTo("ok");
  }

  @Test
  void jsonRoundTripsWithSnakeCaseNamesAndIsoTimes() {
    byte[] json = RunStateJson.toJson(last);
    assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8))
        .contains("\"last_request_id\":\"req-m\"")
        .contains("\"last_created_at\":\"2026-11-29T10:00:00Z\"")
        .contains("\"applied_count\":3");
    assertThat(RunStateJson.fromJson(json)).isEqualTo(last);
  }
}
