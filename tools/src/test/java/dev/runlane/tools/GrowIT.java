package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.generation.Generation;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.ingress.IngressApp;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.Report;
import io.micrometer.core.instrument.Gauge;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Growth as an operator runs it (replay: {@link GenerationsIT}): an ingress and two processor apps
 * under continuous Sume-like load (retries, concurrent and late duplicates, reordering), the tools'
 * command line in the middle of it, and the pipeline verifier afterwards (every acked event applied
 * or stale, none applied twice, per-run order in the events topic, final states = newest events).
 */
@RealInfra
class GrowIT {
  private static final double RATE = 150;
  private static final long EVENTS = 2_400;

  @Test
  void growTo24WhileSumeKeepsDeliveringKeepsEveryGuarantee(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "grow", 12, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261203L, RATE, EVENTS, 600)) {
      Deployment.ToolRun run =
          d.tool("partitions", "grow", "--to", "24", "--timeout-seconds", "120");

      assertThat(run.code()).as(run.err()).isZero();
      assertThat(run.out()).contains("waited at most");
      d.awaitGeneration(1, Duration.ofSeconds(60));
      Generation g = d.generation();
      assertThat(g.input()).isEqualTo(d.topics.webhooks() + ".g1");
      assertThat(g.partitions()).isEqualTo(24);
      Report report = d.verifiedOnceIdle(simulator);
      assertThat(report.count("events acked")).isEqualTo(EVENTS);

      // New events went to the new topic, and runs that were live across the move have history
      // on both sides: the verifier's order check ran over both.
      List<ConsumerRecord<String, byte[]>> before =
          Topics.readAll(infra.bootstrapServers(), d.topics.webhooks());
      List<ConsumerRecord<String, byte[]>> after =
          Topics.readAll(infra.bootstrapServers(), g.input());
      assertThat(after).isNotEmpty();
      Set<String> runsBefore = new HashSet<>();
      before.forEach(r -> runsBefore.add(r.key()));
      long moved =
          after.stream().map(ConsumerRecord::key).distinct().filter(runsBefore::contains).count();
      assertThat(moved).as("runs with events on both inputs").isPositive();
      assertThat(after.stream().map(ConsumerRecord::partition).distinct().count())
          .as("partitions of the new input in use")
          .isGreaterThan(12);
    }
  }

  @Test
  void partitionsAddedByHandStopTheProcessorsAndAGrowRepairsIt(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "repair", 6, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261204L, RATE, EVENTS, 500)) {
      try (Admin admin =
          Admin.create(
              Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
        admin
            .createPartitions(Map.of(d.topics.webhooks(), NewPartitions.increaseTo(12)))
            .all()
            .get();
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> d.processor(0).fatal() != null && d.processor(1).fatal() != null);
      assertThat(d.processor(0).fatal()).contains("runlane partitions grow --to 12");

      // The operator runs the command the processors named; their supervisor restarts them, and
      // they come up once the new generation is active (before, they refuse to start).
      CompletableFuture<Deployment.ToolRun> grow =
          CompletableFuture.supplyAsync(
              () -> d.tool("partitions", "grow", "--to", "12", "--timeout-seconds", "120"));
      d.awaitActiveGeneration(Duration.ofSeconds(90));
      d.restartProcessors();

      Deployment.ToolRun run = grow.get(120, TimeUnit.SECONDS);
      assertThat(run.code()).as(run.err()).isZero();
      assertThat(run.out()).contains("repairing", "events copied");
      d.awaitGeneration(1, Duration.ofSeconds(60));
      Report report = d.verifiedOnceIdle(simulator);
      assertThat(report.count("events acked")).isEqualTo(EVENTS);
    }
  }

  /**
   * Three ingresses through a grow (D71): one follows and acknowledges; one is frozen (its control
   * follower blocked, as a paused process or one cut off from the control topic's leader would be);
   * one follows another control topic. The grow waits for the frozen one until its bound passes,
   * and the frozen one answers 503 instead of writing to the retired input; what the stray one
   * writes there is counted by the processor and copied by the grow run again. Every webhook
   * answered 200 is applied.
   */
  @Test
  void aGrowWaitsForEveryIngressAndWhatLandsInTheRetiredInputIsCopied(Infra infra)
      throws Exception {
    AtomicReference<CountDownLatch> gate = new AtomicReference<>();
    CountDownLatch frozen = new CountDownLatch(1);
    Runnable freezable =
        () -> {
          CountDownLatch g = gate.get();
          if (g != null) {
            frozen.countDown();
            try {
              g.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    try (Deployment d =
            new Deployment(infra, "acks", 4, 1)
                .with("INGRESS_CONTROL_STALE_MS", "2000")
                .with("INGRESS_ACK_TIMEOUT_MS", "2000")
                .startIngress()
                .startProcessors();
        IngressApp paused = d.startAnotherIngress(Map.of(), freezable);
        IngressApp stray =
            d.startAnotherIngress(Map.of("TOPIC_CONTROL", d.controlTopic + ".other"), () -> {})) {
      URI a = d.webhookUri();
      URI b = Deployment.webhookUri(paused);
      URI c = Deployment.webhookUri(stray);
      Instant t0 = Instant.now().minusSeconds(60);
      for (URI uri : List.of(a, b, c)) {
        assertThat(
                d.send(uri, "run-" + uri.getPort() + "-0", "req-" + uri.getPort() + "-0", t0)
                    .statusCode())
            .isEqualTo(200);
      }
      gate.set(new CountDownLatch(1));
      assertThat(frozen.await(10, TimeUnit.SECONDS)).isTrue();

      Deployment.ToolRun grow =
          d.tool("partitions", "grow", "--to", "8", "--timeout-seconds", "60");
      assertThat(grow.code()).as(grow.err()).isZero();
      // The frozen ingress no longer knows which input is current: it writes nothing.
      assertThat(d.send(b, "run-b-late", "req-b-late", t0).statusCode()).isEqualTo(503);
      assertThat(grow.out()).contains("waiting for ingress", "silent past their bound");

      // The stray ingress writes to the retired input: counted, then copied by a second run.
      assertThat(d.send(c, "run-c-late", "req-c-late", t0).statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(40)).until(() -> unreadInRetiredInput(d) >= 1);
      Deployment.ToolRun again = d.tool("partitions", "grow", "--to", "8");
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(again.out()).contains("1 events copied");

      gate.getAndSet(null).countDown();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> d.send(b, "run-b-late", "req-b-late", t0).statusCode() == 200);
      List<String> runs = new ArrayList<>(List.of("run-b-late", "run-c-late"));
      List.of(a, b, c).forEach(uri -> runs.add("run-" + uri.getPort() + "-0"));
      for (String run : runs) {
        await()
            .atMost(Duration.ofSeconds(30))
            .alias(run)
            .until(() -> d.getRun(run).statusCode() == 200);
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> unreadInRetiredInput(d) == 0);
    }
  }

  private static double unreadInRetiredInput(Deployment d) {
    Gauge g = d.processorRegistry(0).find("runlane.processor.retired.input.unread.records").gauge();
    return g == null ? -1 : g.value();
  }
}
