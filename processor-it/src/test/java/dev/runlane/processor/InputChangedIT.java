package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.generation.InputChangedException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.junit.jupiter.api.Test;

/**
 * Partitions added to the input by hand: the processor stops with one clear reason and a failing
 * liveness probe, instead of replacing stream threads for ever behind a live 200 (D36).
 */
@RealInfra
class InputChangedIT {
  @Test
  void aRunningProcessorStopsAndFailsLivenessWhenItsInputGrows(Infra infra) throws Exception {
    try (ProcessorHarness p = appliedOne(infra, "grown")) {
      assertThat(p.live()).isEqualTo(200);

      grow(infra, p.topics.webhooks(), 6);

      await().atMost(Duration.ofSeconds(30)).until(() -> p.app.fatal() != null);
      assertThat(p.app.fatal())
          .contains(p.topics.webhooks(), "6 partitions", "3", "runlane partitions grow");
      await().atMost(Duration.ofSeconds(30)).until(() -> p.live() == 503);
      assertThat(p.app.streams()).as("Streams closed, not looping").isNull();
    }
  }

  @Test
  void aProcessorStartedOnAGrownInputRefusesToStart(Infra infra) throws Exception {
    try (ProcessorHarness p = appliedOne(infra, "grown-start")) {
      p.stop();

      grow(infra, p.topics.webhooks(), 6);

      assertThatThrownBy(p::start)
          .isInstanceOf(InputChangedException.class)
          .hasMessageContaining("has 6 partitions but its run state")
          .hasMessageContaining(p.applicationId + "-runs-changelog) has 3")
          .hasMessageContaining("docs/operations.md");
    }
  }

  private static void grow(Infra infra, String topic, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions))).all().get();
    }
  }

  /** A started processor that has applied one event. */
  private static ProcessorHarness appliedOne(Infra infra, String label) {
    ProcessorHarness p = ProcessorHarness.unique(infra, label).start();
    p.send("run-1", "req-1", Instant.parse("2026-12-01T10:00:00Z"));
    await().atMost(Duration.ofSeconds(30)).until(() -> p.count("applied", "store") == 1);
    return p;
  }
}
