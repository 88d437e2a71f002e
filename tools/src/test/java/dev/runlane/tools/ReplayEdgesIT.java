package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.Report;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Replay's edge cases (the common runs: {@link GenerationsIT}): a rebuild of a rebuild after Redis
 * lost its keys, done markers of an older generation's aborted transactions, and a stopped
 * generation holding more events than one control record can name (no processor), with an ingress
 * and two processor apps under continuous Sume-like load (retries, concurrent and late duplicates,
 * reordering), the tools' command line in the middle of it, and the pipeline verifier afterwards
 * (every acked event applied or stale, none applied twice, per-run order in the events topic, final
 * states = newest events).
 */
@RealInfra
class ReplayEdgesIT {
  private static final double RATE = 150;
  private static final long EVENTS = 2_400;

  @Test
  void aRebuildOfARebuildStillCatchingUpAfterRedisLostItsKeysEmitsNothingTwice(Infra infra)
      throws Exception {
    try (Deployment d = new Deployment(infra, "rebuild2", 6, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulatorPast(20261205L, RATE, EVENTS, 800)) {
      Deployment.ToolRun first = d.tool("replay", "rebuild", "--no-wait");
      assertThat(first.code()).as(first.err()).isZero();
      deleteMarkers(infra, d); // Redis loses every key, as after a restart without persistence
      Deployment.ToolRun second = d.tool("replay", "rebuild", "--timeout-seconds", "120");

      assertThat(second.code()).as(second.err()).isZero();
      d.awaitGeneration(2, Duration.ofSeconds(60));
      Report report = d.verifiedOnceIdle(simulator);
      assertThat(report.count("applied again by a reprocess (marked)")).isZero();
    }
  }

  @Test
  void doneMarkersOfAnOlderGenerationsAbortedTransactionsDropNothing(Infra infra) throws Exception {
    try (Deployment d = new Deployment(infra, "aborted", 6, 2).startIngress().startProcessors();
        SumeSimulator simulator = d.simulator(20261206L)) {
      d.stopProcessors();
      simulator.start(100, 300, Duration.ofMinutes(1));
      assertThat(simulator.awaitIdle(Duration.ofSeconds(60))).as("simulator idle").isTrue();
      // Generation 0 read these events and decided them in a transaction that aborted: the run
      // store rolled back, the done markers it wrote before the commit stayed (design.md §6.2).
      List<ConsumerRecord<String, byte[]>> unprocessed =
          Topics.readAll(infra.bootstrapServers(), d.topics.webhooks());
      assertThat(unprocessed).isNotEmpty();
      try (Jedis jedis = new Jedis(infra.redisUri())) {
        for (ConsumerRecord<String, byte[]> r : unprocessed) {
          String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
          jedis.set(d.keyPrefix() + id, "done:0_" + r.partition());
        }
      }

      CompletableFuture<Deployment.ToolRun> rebuild =
          CompletableFuture.supplyAsync(
              () -> d.tool("replay", "rebuild", "--timeout-seconds", "120"));
      d.awaitActiveGeneration(Duration.ofSeconds(60));
      d.startProcessors();
      Deployment.ToolRun run = rebuild.get(120, TimeUnit.SECONDS);

      assertThat(run.code()).as(run.err()).isZero();
      Deployment.passed(d.verify(simulator));
    }
  }

  @Test
  void aReplayOfAGenerationHolding200000EventsActivates(Infra infra) throws Exception {
    int partitions = 4;
    int read = 60_000;
    try (Deployment d = new Deployment(infra, "held200k", partitions, 0).startIngress()) {
      // Generation 0 read and committed 60,000 records of each partition while its reorder window
      // held 50,000 of them (each offset but every sixth): what its processors leave behind when
      // their Streams stop with a long window and a high PROCESSOR_REORDER_MAX_HELD (D46).
      Map<String, Object> client =
          Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers());
      String held = StateTopics.heldChangelog(d.applicationId);
      try (Admin admin = Admin.create(client)) {
        admin.createTopics(List.of(new NewTopic(held, partitions, (short) 1))).all().get();
      }
      // The tools read the input's offsets, never its records: only the held store is written.
      // Every record must land: a send that fails (a fresh topic's leader moving on a loaded
      // broker) is sent again, or the store the tools read would be short of what was held.
      try (KafkaProducer<Long, byte[]> changelog =
          new KafkaProducer<>(client, new LongSerializer(), new ByteArraySerializer())) {
        byte[] value = {1};
        List<ProducerRecord<Long, byte[]>> toSend = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
          for (long o = 0; o < read; o++) {
            if (o % 6 != 0) {
              toSend.add(new ProducerRecord<>(held, p, o, value));
            }
          }
        }
        for (int attempt = 0; !toSend.isEmpty(); attempt++) {
          assertThat(attempt).as("attempts to write the held store").isLessThan(5);
          List<ProducerRecord<Long, byte[]>> failed = new CopyOnWriteArrayList<>();
          for (ProducerRecord<Long, byte[]> r : toSend) {
            changelog.send(
                r,
                (m, e) -> {
                  if (e != null) {
                    failed.add(r);
                  }
                });
          }
          changelog.flush();
          toSend = List.copyOf(failed);
        }
      }
      Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        committed.put(new TopicPartition(d.topics.webhooks(), p), new OffsetAndMetadata(read));
      }
      try (Admin admin = Admin.create(client)) {
        admin.alterConsumerGroupOffsets(d.applicationId, committed).all().get();
      }

      Deployment.ToolRun run = d.tool("replay", "rebuild", "--no-wait", "--timeout-seconds", "60");

      assertThat(run.code()).as(run.err()).isZero();
      assertThat(run.out()).contains("200000 parked undecided");
      Generation active = d.latestGeneration().orElseThrow();
      assertThat(active.state()).isEqualTo(Generation.State.ACTIVE);
      assertThat(active.replay().parked().values().stream().mapToInt(List::size).sum())
          .isEqualTo(200_000);
      assertThat(active.replay().rangeOf(3, 59_999)).isEqualTo(Replay.Range.UNCLAIMED);
      assertThat(active.replay().rangeOf(3, 59_994)).isEqualTo(Replay.Range.SILENT);
      assertThat(active.replay().rangeOf(3, 60_000)).isEqualTo(Replay.Range.LIVE);
    }
  }

  /** Deletes every dedup key of the deployment (its own namespace: the Redis is shared). */
  private static void deleteMarkers(Infra infra, Deployment d) {
    try (Jedis jedis = new Jedis(infra.redisUri())) {
      String cursor = ScanParams.SCAN_POINTER_START;
      ScanParams match = new ScanParams().match(d.keyPrefix() + "*").count(1000);
      do {
        ScanResult<String> page = jedis.scan(cursor, match);
        if (!page.getResult().isEmpty()) {
          jedis.del(page.getResult().toArray(String[]::new));
        }
        cursor = page.getCursor();
      } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
    }
  }
}
