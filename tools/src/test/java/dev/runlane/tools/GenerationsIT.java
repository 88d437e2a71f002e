package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.Report;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Replay as an operator runs it (its edge cases: {@link ReplayEdgesIT}; growth: {@link GrowIT}): an
 * ingress and two processor apps under continuous Sume-like load (retries, concurrent and late
 * duplicates, reordering), the tools' command line in the middle of it, and the pipeline verifier
 * afterwards (every acked event applied or stale, none applied twice, per-run order in the events
 * topic, final states = newest events).
 */
@RealInfra
class GenerationsIT {
  private static final double RATE = 150;
  private static final long EVENTS = 2_400;

  @Test
  void rebuildRederivesEveryRunAndEmitsNothingAgain(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "rebuild", 6, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261201L, RATE, EVENTS, 800)) {
      Deployment.ToolRun run = d.tool("replay", "rebuild", "--timeout-seconds", "120");

      assertThat(run.code()).as(run.err()).isZero();
      assertThat(run.out()).contains("events to re-derive silently", "events/s");
      d.awaitGeneration(1, Duration.ofSeconds(60));
      assertThat(d.generation().kind()).isEqualTo(Generation.Kind.REBUILD);
      Report report = d.verifiedOnceIdle(simulator);
      assertThat(report.count("events acked")).isEqualTo(EVENTS);
      assertThat(report.count("applied again by a reprocess (marked)")).isZero();
      // It did re-derive (silently) what generation 0 had applied, rather than skip it.
      assertThat(d.count(ProcessorMetrics.REPLAYED, "range", "silent")).isGreaterThan(800);
    }
  }

  @Test
  void aRebuildWithAReorderWindowLosesNoneOfTheEventsTheStoppedGenerationHeld(Infra infra)
      throws Exception {
    Duration window = Duration.ofSeconds(1);
    try (Deployment d =
            new Deployment(infra, "rebuild-window", 6, 2)
                .with("PROCESSOR_REORDER_WINDOW", "1s")
                .startIngress()
                .startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261204L, RATE, EVENTS, 800)) {
      Deployment.ToolRun run = d.tool("replay", "rebuild", "--timeout-seconds", "120");

      assertThat(run.code()).as(run.err()).isZero();
      d.awaitGeneration(1, Duration.ofSeconds(60));
      // What generation 0's reorder window held when it stopped, read from its own changelog.
      long heldAtStop =
          dev.runlane.tools.kafka.Changelogs.parked(
                  Map.<String, Object>of("bootstrap.servers", infra.bootstrapServers()),
                  dev.runlane.common.generation.StateTopics.heldChangelog(d.applicationId))
              .values()
              .stream()
              .mapToLong(List::size)
              .sum();
      // Generation 0 stopped with events held, decided but never emitted: the rebuild decides
      // them again as new (on the run store alone) instead of re-deriving them silently (D46).
      long undecided =
          d.generation().replay().parked().values().stream().mapToLong(List::size).sum();
      Report report = d.verifiedOnceIdle(simulator, window);
      assertThat(report.count("events acked")).isEqualTo(EVENTS);
      assertThat(report.count("held by the reorder window")).isGreaterThan(800);
      assertThat(report.count("applied again by a reprocess (marked)")).isZero();
      assertThat(heldAtStop).as("events generation 0's window held when it stopped").isPositive();
      assertThat(undecided)
          .as("decided again as new: at least the held ones")
          .isGreaterThanOrEqualTo(heldAtStop);
    }
  }

  @Test
  void reprocessEmitsTheEventsAfterTOnceMoreMarkedAndNoneBefore(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "reprocess", 6, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261202L, RATE, EVENTS, 600)) {
      Instant from = Instant.now();
      Deployment.awaitAcked(simulator, 1200);

      Deployment.ToolRun run =
          d.tool("replay", "reprocess", "--from", from.toString(), "--timeout-seconds", "120");

      assertThat(run.code()).as(run.err()).isZero();
      // Where generation 0 stopped, read independently of the replay record: its group's offsets.
      Map<Integer, Long> stoppedAt;
      try (Admin admin =
          Admin.create(
              Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
        stoppedAt = new HashMap<>();
        admin
            .listConsumerGroupOffsets(d.applicationId)
            .partitionsToOffsetAndMetadata()
            .get()
            .forEach((tp, om) -> stoppedAt.put(tp.partition(), om.offset()));
      }
      d.awaitGeneration(1, Duration.ofSeconds(60));
      Replay replay = d.generation().replay();
      assertThat(replay.from()).isEqualTo(from.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
      Report report = d.verifiedOnceIdle(simulator);

      // Which request ids the reprocess had to emit again: those applied by generation 0 whose
      // first copy in the input (where they were applied, if at all) was received at T or later
      // and committed by generation 0 (not one of the few it left parked undecided).
      Map<String, ConsumerRecord<String, byte[]>> firstCopy = new HashMap<>();
      for (ConsumerRecord<String, byte[]> r :
          Topics.readAll(infra.bootstrapServers(), d.topics.webhooks())) {
        firstCopy.putIfAbsent(RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID), r);
      }
      Set<String> applied = new HashSet<>();
      Map<String, Integer> marked = new HashMap<>();
      for (ConsumerRecord<String, byte[]> r :
          Topics.readAll(infra.bootstrapServers(), d.topics.events())) {
        String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
        String replayId = RecordHeaders.get(r.headers(), Replay.HEADER);
        if (replayId == null) {
          applied.add(id);
        } else {
          assertThat(replayId).isEqualTo(replay.id());
          assertThat(Instant.ofEpochMilli(r.timestamp()))
              .as(id + " received")
              .isAfterOrEqualTo(replay.from());
          marked.merge(id, 1, Integer::sum);
        }
      }
      Set<String> expected = new HashSet<>();
      for (String id : applied) {
        ConsumerRecord<String, byte[]> first = firstCopy.get(id);
        boolean parked =
            replay.parked().getOrDefault(first.partition(), List.of()).contains(first.offset());
        if (first.timestamp() >= replay.from().toEpochMilli()
            && first.offset() < stoppedAt.getOrDefault(first.partition(), 0L)
            && !parked) {
          expected.add(id);
        }
      }
      assertThat(expected)
          .as("events after T that generation 0 had applied")
          .hasSizeGreaterThan(100);
      assertThat(marked.keySet()).isEqualTo(expected);
      assertThat(marked.values()).allMatch(n -> n == 1);
    }
  }
}
