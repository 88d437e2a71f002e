package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

/**
 * A stream thread that dies on every attempt is not replaced for ever behind a live 200: after more
 * than {@link ThreadDeathPolicy#MAX_THREAD_REPLACEMENTS} deaths in the window the processor stops
 * and its liveness turns DOWN, so a supervisor restarts it (D36).
 */
@RealInfra
class LivenessIT {
  @Test
  void threadsDyingInALoopTurnLivenessDown(Infra infra) throws Exception {
    String name = infra.uniqueName("liveness");
    // A poison the processor cannot get past: its applied event is too large for the events
    // topic as the operator created it, so every attempt fails the stream thread again.
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(name + ".events", Optional.of(3), Optional.empty())
                      .configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "2048"))))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    try (ProcessorHarness p = new ProcessorHarness(infra, name).start()) {
      assertThat(p.live()).isEqualTo(200);
      byte[] noise = new byte[6144];
      new java.util.Random(7).nextBytes(noise); // incompressible: lz4 cannot shrink it below
      p.sendAsync(
              "run-1",
              "req-1",
              Instant.parse("2026-12-01T10:00:00Z"),
              java.util.Base64.getEncoder().encodeToString(noise))
          .get(30, TimeUnit.SECONDS);

      // The stream threads die on purpose here: not a failure of the test thread.
      await()
          .dontCatchUncaughtExceptions()
          .atMost(Duration.ofSeconds(120))
          .until(() -> p.app.fatal() != null);
      assertThat(p.app.fatal()).contains("stream threads died", "times within 5 minutes");
      await()
          .dontCatchUncaughtExceptions()
          .atMost(Duration.ofSeconds(30))
          .until(() -> p.live() == 503);
    }
  }
}
