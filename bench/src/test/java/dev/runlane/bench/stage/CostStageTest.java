package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
