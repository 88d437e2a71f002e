package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The tools refuse what would break a guarantee, say why, and change nothing. */
@RealInfra
class ToolsRefusalIT {

  @Test
  void aGrowToFewerOrAsManyPartitionsIsRefused(Infra infra) {
    try (Deployment d = new Deployment(infra, "refuse-grow", 6, 0).startIngress()) {
      Deployment.ToolRun run = d.tool("partitions", "grow", "--to", "6");

      assertThat(run.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(run.err()).contains("a grow must add partitions", "has 6, --to 6");
      assertThat(latest(d)).isEmpty();
    }
  }

  @Test
  void aDryRunPrintsThePlanAndChangesNothing(Infra infra) {
    try (Deployment d = new Deployment(infra, "dry-run", 3, 0).startIngress()) {
      Deployment.ToolRun grow = d.tool("partitions", "grow", "--to", "6", "--dry-run");
      Deployment.ToolRun rebuild = d.tool("replay", "rebuild", "--dry-run");

      assertThat(grow.code()).isZero();
      assertThat(grow.out()).contains("plan: create " + d.topics.webhooks() + ".g1 (6 partitions)");
      assertThat(rebuild.code()).isZero();
      assertThat(rebuild.out()).contains("plan: stop generation 0", "dry run: nothing changed");
      assertThat(latest(d)).isEmpty();
    }
  }

  @Test
  void aReplayOfAnInputThatRetentionTruncatedIsRefused(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "refuse-truncated", 3, 0).startIngress()) {
      try (var simulator = d.simulator(7L)) {
        simulator.start(50, 60, Duration.ofSeconds(30));
        assertThat(simulator.awaitIdle(Duration.ofSeconds(60))).isTrue();
      }
      try (Admin admin =
          Admin.create(
              Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
        admin
            .deleteRecords(
                Map.of(new TopicPartition(d.topics.webhooks(), 1), RecordsToDelete.beforeOffset(1)))
            .all()
            .get();
      }

      Deployment.ToolRun run = d.tool("replay", "reprocess", "--from", Instant.now().toString());

      assertThat(run.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(run.err()).contains("retention deleted events", "1@1", "retention.ms=-1");
      assertThat(latest(d)).isEmpty();
    }
  }

  @Test
  void aReprocessFromTheFutureIsRefused(Infra infra) {
    try (Deployment d = new Deployment(infra, "refuse-future", 3, 0).startIngress()) {
      Deployment.ToolRun run =
          d.tool("replay", "reprocess", "--from", Instant.now().plusSeconds(3600).toString());

      assertThat(run.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(run.err()).contains("is in the future");
    }
  }

  private static Optional<Generation> latest(Deployment d) {
    try (ControlTopic.Reader r =
        new ControlTopic.Reader(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, d.infra.bootstrapServers()),
            d.controlTopic,
            d.topics.webhooks())) {
      return r.latest(Duration.ofSeconds(30));
    }
  }
}
