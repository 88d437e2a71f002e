package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.dedup.ClaimAnswer;
import dev.runlane.processor.dedup.ClaimRequest;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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

  /**
   * A starting processor answers on its admin port while its start checks run, live and not ready,
   * and no stream thread has joined its group before Redis was checked: the port opens early, the
   * guard still comes before Streams (D85).
   */
  @Test
  void theAdminPortAnswersNotReadyWhileTheStartChecksRun(Infra infra) throws Exception {
    try (ProcessorHarness p = ProcessorHarness.unique(infra, "start-order")) {
      int port;
      try (ServerSocket free = new ServerSocket(0)) {
        port = free.getLocalPort();
      }
      ProcessorConfig config = p.config().withPort(port);
      p.registry = Metrics.newRegistry("processor");
      CountDownLatch checking = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      Dedup held =
          new HeldCheck(new RedisDedup(config.redisDedupSettings(), p.registry), checking, release);
      CompletableFuture<ProcessorApp> starting =
          CompletableFuture.supplyAsync(
              () -> ProcessorApp.start(config, held, p.registry, FaultHook.NONE));
      try {
        assertThat(checking.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(status(port, "/health/live")).isEqualTo(200);
        assertThat(status(port, "/health/ready")).isEqualTo(503);
        try (Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, p.bootstrap))) {
          assertThat(
                  admin.listGroups().all().get(30, TimeUnit.SECONDS).stream()
                      .map(g -> g.groupId())
                      .toList())
              .as("groups while Redis is being checked: no stream thread may have joined")
              .doesNotContain(p.applicationId);
        }
      } finally {
        release.countDown();
      }
      // Released, the start goes on to Streams (not awaited RUNNING: CI time).
      p.app = starting.get(60, TimeUnit.SECONDS);
      assertThat(p.app.streams()).isNotNull();
    }
  }

  private static int status(int port, String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** Redis as it is, but its start check waits until the test releases it. */
  private record HeldCheck(Dedup redis, CountDownLatch checking, CountDownLatch release)
      implements Dedup {
    @Override
    public void verifyAccess() {
      checking.countDown();
      try {
        if (!release.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never released the Redis check");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      redis.verifyAccess();
    }

    @Override
    public ClaimAnswer claim(List<ClaimRequest> requests) {
      return redis.claim(requests);
    }

    @Override
    public Set<String> markDone(String owner, Collection<Marker> markers) {
      return redis.markDone(owner, markers);
    }

    @Override
    public void release(String owner, Collection<EventKey> events) {
      redis.release(owner, events);
    }

    @Override
    public Set<String> takenForOtherRuns(Collection<EventKey> events) {
      return redis.takenForOtherRuns(events);
    }

    @Override
    public void close() {
      redis.close();
    }
  }
}
