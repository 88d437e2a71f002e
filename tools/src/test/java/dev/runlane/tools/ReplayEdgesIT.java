package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.Report;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Replay's edge cases (the common runs: {@link GenerationsIT}): a rebuild of a rebuild after Redis
 * lost its keys, and done markers of an older generation's aborted transactions, with an ingress
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
