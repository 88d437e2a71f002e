package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
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

  @Test
  void aRebuildWhoseResumeIsRefusedIsAbortedAndGenerationZeroRunsAgain(Infra infra)
      throws Exception {
    try (Deployment d = new Deployment(infra, "abort-replay", 3, 0).startIngress()) {
      // A rebuild stopped generation 0 and died (kill -9) before it read where it stopped; since
      // then, retention moved: the rebuild can no longer be finished.
      Generation g0 = Generation.initial(d.applicationId, d.topics.webhooks());
      d.writeControl(Deployment.preparing(g0, 1, Kind.REBUILD, d.topics.webhooks(), 3));
      d.post("run-a", "req-a", Instant.now());
      deleteFirstRecord(d);
      Deployment.ToolRun resume = d.tool("replay", "rebuild");
      assertThat(resume.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(latest(d).orElseThrow().state()).isEqualTo(Generation.State.PREPARING);

      Deployment.ToolRun abort = d.tool("replay", "abort");

      assertThat(abort.code()).as(abort.err()).isZero();
      assertThat(abort.out()).contains("generation 0 is active again");
      Generation restored = latest(d).orElseThrow();
      assertThat(restored.state()).isEqualTo(Generation.State.ACTIVE);
      assertThat(restored.number()).isZero();
      assertThat(restored.applicationId()).isEqualTo(d.applicationId);
      assertThat(restored.toRun()).isEqualTo(restored);
      // The aborted generation's number is never used again: its topics may be left behind.
      Deployment.ToolRun grow = d.tool("partitions", "grow", "--to", "6", "--dry-run");
      assertThat(grow.out()).contains(d.topics.webhooks() + ".g2");
      Deployment.ToolRun again = d.tool("replay", "abort");
      assertThat(again.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(again.err()).contains("no replay is in progress");
    }
  }

  @Test
  void aSeedingGrowIsAbortedAndWhatTheIngressWroteToItsInputIsCopiedBackOnce(Infra infra)
      throws Exception {
    try (Deployment d = new Deployment(infra, "abort-grow", 3, 0).startIngress()) {
      String input = d.topics.webhooks() + ".g1";
      try (Admin admin = admin(d)) {
        admin.createTopics(List.of(new NewTopic(input, 6, (short) 1))).all().get();
      }
      // A grow moved the ingress, stopped generation 0, copied an event it had left undecided
      // into the new input, and died (kill -9) before it started generation 1.
      Generation g0 = Generation.initial(d.applicationId, d.topics.webhooks());
      Generation grow = Deployment.preparing(g0, 1, Kind.GROW, input, 6);
      d.writeControl(grow);
      AtomicInteger probes = new AtomicInteger();
      await() // until the ingress writes to the grow's input
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                String id = "probe-" + probes.incrementAndGet();
                d.post("run-probe", id, Instant.now());
                return inputOf(d, id).equals(input);
              });
      List<String> posted = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        d.post("run-" + i, "req-" + i, Instant.now());
        posted.add("req-" + i);
      }
      d.writeControl(grow.withState(Generation.State.SEEDING));
      try (KafkaProducer<String, String> p =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, d.infra.bootstrapServers()),
              new StringSerializer(),
              new StringSerializer())) {
        ProducerRecord<String, String> undecided = new ProducerRecord<>(input, "run-x", "{}");
        undecided.headers().add(Replay.UNDECIDED_HEADER, "1".getBytes(StandardCharsets.UTF_8));
        undecided
            .headers()
            .add(RecordHeaders.REQUEST_ID, "req-undecided".getBytes(StandardCharsets.UTF_8));
        p.send(undecided).get();
      }

      Deployment.ToolRun abort = d.tool("partitions", "grow", "--abort", "--quiet-seconds", "1");
      Deployment.ToolRun again = d.tool("partitions", "grow", "--abort", "--quiet-seconds", "1");

      assertThat(abort.code()).as(abort.err()).isZero();
      // The 20, and the probe that found the ingress writing to the grow's input.
      assertThat(abort.out()).contains("generation 0 is active again", "21 events copied back");
      assertThat(latest(d).orElseThrow().ingressInput()).isEqualTo(d.topics.webhooks());
      assertThat(again.code()).as(again.err()).isZero();
      assertThat(again.out()).contains("0 more events copied back");
      List<String> inBase =
          Topics.readAll(d.infra.bootstrapServers(), d.topics.webhooks()).stream()
              .map(r -> RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID))
              .toList();
      for (String id : posted) {
        assertThat(inBase).as(id).containsOnlyOnce(id);
      }
      // Still in generation 0's input where it was, undecided: not copied back a second time.
      assertThat(inBase).doesNotContain("req-undecided");
    }
  }

  /** The input topic the record with this request id was written to, or "" if none yet. */
  private static String inputOf(Deployment d, String requestId) {
    for (String topic : List.of(d.topics.webhooks(), d.topics.webhooks() + ".g1")) {
      for (ConsumerRecord<String, byte[]> r : Topics.readAll(d.infra.bootstrapServers(), topic)) {
        if (requestId.equals(RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID))) {
          return topic;
        }
      }
    }
    return "";
  }

  @Test
  void aGrowAbortOnAnInputWithPartitionsAddedByHandIsRefused(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "abort-repair", 3, 0).startIngress()) {
      Generation g0 = Generation.initial(d.applicationId, d.topics.webhooks());
      try (Admin admin = admin(d)) {
        admin
            .createPartitions(Map.of(d.topics.webhooks(), NewPartitions.increaseTo(6)))
            .all()
            .get();
        // Generation 0 ran on 3 partitions: its run store's changelog has 3.
        admin
            .createTopics(
                List.of(
                    new NewTopic(d.topics.webhooks() + ".g1", 6, (short) 1),
                    new NewTopic(StateTopics.runsChangelog(d.applicationId), 3, (short) 1)))
            .all()
            .get();
      }
      Generation grow = Deployment.preparing(g0, 1, Kind.GROW, d.topics.webhooks() + ".g1", 6);
      d.writeControl(grow);

      Deployment.ToolRun abort = d.tool("partitions", "grow", "--abort");

      assertThat(abort.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(abort.err()).contains("added by hand", "partitions grow --to 6");
      assertThat(latest(d)).contains(grow);
      Deployment.ToolRun wrongCommand = d.tool("replay", "abort");
      assertThat(wrongCommand.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(wrongCommand.err()).contains("partitions grow --abort");
    }
  }

  @Test
  void aGrowFromAGenerationWhoseRunStoreChangelogIsGoneIsRefusedAndSoIsItsAbort(Infra infra)
      throws Exception {
    try (Deployment d = new Deployment(infra, "seed-gone", 3, 0).startIngress()) {
      // Generation 0 committed offsets; its run store's changelog was deleted by hand.
      d.post("run-a", "req-a", Instant.now());
      Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
      for (int p = 0; p < 3; p++) {
        committed.put(new TopicPartition(d.topics.webhooks(), p), new OffsetAndMetadata(0));
      }
      try (Admin admin = admin(d)) {
        admin.alterConsumerGroupOffsets(d.applicationId, committed).all().get();
        admin
            .createTopics(List.of(new NewTopic(d.topics.webhooks() + ".g1", 6, (short) 1)))
            .all()
            .get();
      }
      String changelog = StateTopics.runsChangelog(d.applicationId);

      Deployment.ToolRun grow = d.tool("partitions", "grow", "--to", "6", "--dry-run");
      Generation g0 = Generation.initial(d.applicationId, d.topics.webhooks());
      d.writeControl(Deployment.preparing(g0, 1, Kind.GROW, d.topics.webhooks() + ".g1", 6));
      Deployment.ToolRun resume =
          d.tool(
              "partitions", "grow", "--to", "6", "--quiet-seconds", "1", "--timeout-seconds", "5");
      Deployment.ToolRun abort = d.tool("partitions", "grow", "--abort");

      assertThat(grow.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(grow.err()).contains(changelog + " no longer exists", "no run state");
      assertThat(resume.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(abort.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(abort.err()).contains(changelog + " no longer exists", "(G3)");
      assertThat(latest(d).orElseThrow().state()).isEqualTo(Generation.State.PREPARING);
    }
  }

  /** Retention deletes the input's first record. */
  private static void deleteFirstRecord(Deployment d) throws Exception {
    int partition =
        Topics.readAll(d.infra.bootstrapServers(), d.topics.webhooks()).get(0).partition();
    try (Admin admin = admin(d)) {
      admin
          .deleteRecords(
              Map.of(
                  new TopicPartition(d.topics.webhooks(), partition),
                  RecordsToDelete.beforeOffset(1)))
          .all()
          .get();
    }
  }

  private static Admin admin(Deployment d) {
    return Admin.create(
        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, d.infra.bootstrapServers()));
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
