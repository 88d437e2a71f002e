package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.bench.report.Results;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CostStageTest {

  @Test
  void cpuMillisOverWebhooksIsMicrosecondsPerWebhookAndNoneIsNotZero() {
    assertThat(CostStage.perWebhookMicros(5_000, 20_000)).isEqualTo(250.0);
    assertThat(CostStage.perWebhookMicros(5_000, 0)).isNaN();
  }

  @Test
  void redisPidComesFromInfoServer() {
    String info = "# Server\r\nredis_version:6.2.6\r\nprocess_id:4242\r\ntcp_port:6379\r\n";
    assertThat(CostDeployments.processId(info)).isEqualTo(4242L);
    assertThatThrownBy(() -> CostDeployments.processId("# Server\r\n"))
        .hasMessageContaining("no process_id");
  }

  @Test
  void aComponentOnlyRunlaneHasGetsARowOfItsOwnAmongTheFurtherWebhookRows() {
    // The stage's first full run failed here: "ratios of 3 values to 0 values" for Redis.
    Results res = new Results("test");
    CostStage.reportMarginal(
        res,
        Map.of(
            "ingress",
            List.of(28.0, 33.0),
            "Redis",
            List.of(5.0, 6.0),
            "total",
            List.of(103.0, 120.0)),
        Map.of("ingress", List.of(8.0, 5.0), "total", List.of(15.0, 14.0)));

    assertThat(res.rows()).hasSize(3);
    assertThat(res.rows().get(1).toString()).contains("Redis (runlane only)");
  }
}
