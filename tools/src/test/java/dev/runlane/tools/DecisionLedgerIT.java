package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.generation.Pipeline;
import dev.runlane.tools.ledger.AuditWatch;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The decision log, {@code trace} and {@code audit} on the real broker and Redis (D86-D88): a
 * retry, concurrent copies, an event out of order, a reused id and a record that is no envelope
 * each leave one decision that {@code trace} shows field by field, and {@code audit} balances;
 * records taken out of the events topic make it fail, naming them, and the continuous check's
 * {@code runlane_audit_unaccounted_records} rise (D89).
 */
@RealInfra
class DecisionLedgerIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int PARTITIONS = 3;

  /** The decision of request id {@code poison} always throws, as a bug in deciding it would. */
  private static final FaultHook POISON =
      new FaultHook() {
        @Override
        public void afterMarkDone(Collection<String> requestIds) {}

        @Override
        public void beforeDecide(String requestId) {
          if (requestId.equals("poison")) {
            throw new IllegalArgumentException("cannot decide this one");
          }
        }
      };

  @Test
  void traceShowsEveryDeliveryAndDecisionAndAuditBalancesUntilARecordIsLost(Infra infra)
      throws Exception {
    try (Deployment d =
        new Deployment(infra, "ledger", PARTITIONS, 1)
            .withFaultHook(POISON)
            .startIngress()
            .startProcessors()
            .startSink(infra.postgres())) {
      d.with("PROCESSOR_URL", "http://127.0.0.1:" + d.processor(0).adminPort());
      String decisions = d.env().get("TOPIC_DECISIONS");
      String a = "run-a";
      String b = "run-b";
      d.post(a, "a1", T0.plusSeconds(1));
      awaitDecisions(infra, decisions, 1);
      // The retry comes once the first copy's done marker is in Redis: Redis decides it.
      try (Jedis jedis = new Jedis(infra.redisUri())) {
        await()
            .atMost(Duration.ofSeconds(30))
            .dontCatchUncaughtExceptions()
            .until(() -> String.valueOf(jedis.get(d.keyPrefix() + "a1")).startsWith("done:"));
      }
      d.post(a, "a1", T0.plusSeconds(1));
      // Two copies at once.
      CompletableFuture<Void> copy = CompletableFuture.runAsync(() -> post(d, a, "a2", 2));
      post(d, a, "a2", 2);
      copy.get(30, TimeUnit.SECONDS);
      d.post(a, "a3", T0.plusSeconds(3));
      awaitDecisions(infra, decisions, 5);
      // Its decision throws: three attempts abort their transactions, none of them is recorded;
      // the dead letter is (D43, D86).
      d.post(a, "poison", T0.plusSeconds(4));
      awaitDecisions(infra, decisions, 6);
      d.post(a, "a0", T0.plusMillis(500)); // older than a3: stale
      d.post(b, "a1", T0.plusSeconds(1)); // a1 on another run: reused
      // a0 waits for a drain, a record that is no envelope is decided as it is read: the trace's
      // time order is the order sent only once a0 is decided.
      awaitDecisions(infra, decisions, 8);
      notAnEnvelope(infra, d, a);
      awaitDecisions(infra, decisions, 9);

      JsonNode trace = json(d.tool("trace", "--run", a, "--json"));
      List<JsonNode> told = new ArrayList<>();
      trace.get("decisions").forEach(told::add);
      assertThat(story(told))
          .containsExactly(
              "a1 applied",
              "a1 duplicate",
              "a2 applied",
              "a2 duplicate",
              "a3 applied",
              "poison dead-lettered",
              "a0 stale",
              "bad invalid");
      JsonNode first = trace.get("decisions").get(0);
      int partition = Utils.toPositive(Utils.murmur2(a.getBytes(StandardCharsets.UTF_8))) % 3;
      assertThat(text(first, "run_id")).isEqualTo(a);
      assertThat(text(first, "input_topic")).isEqualTo(d.topics.webhooks());
      assertThat(first.get("input_partition").asInt()).isEqualTo(partition);
      assertThat(first.get("generation").asInt()).isZero();
      assertThat(first.has("replay")).isFalse();
      assertThat(text(first, "layer")).isEqualTo("store");
      assertThat(text(first, "output")).isEqualTo(d.topics.events());
      assertThat(first.get("received_at").asLong())
          .isPositive()
          .isLessThanOrEqualTo(first.get("decided_at").asLong());
      JsonNode[] all = new JsonNode[8];
      for (int i = 0; i < 8; i++) {
        all[i] = trace.get("decisions").get(i);
      }
      assertThat(text(all[1], "layer")).isEqualTo("redis");
      assertThat(all[1].has("output")).isFalse();
      assertThat(text(all[3], "layer")).isIn("batch", "redis", "record");
      assertThat(text(all[5], "layer")).isEqualTo("attempts");
      assertThat(text(all[5], "reason")).isEqualTo("apply_failed");
      assertThat(text(all[5], "output")).isEqualTo(d.topics.dlq());
      assertThat(text(all[6], "layer")).isEqualTo("store");
      assertThat(text(all[6], "output")).isEqualTo(d.topics.stale());
      assertThat(text(all[7], "layer")).isEqualTo("intake");
      assertThat(text(all[7], "reason")).isEqualTo("not_json");
      assertThat(text(all[7], "output")).isEqualTo(d.topics.dlq());
      assertThat(all[7].has("received_at")).isTrue();
      assertThat(trace.get("undecided")).isEmpty();
      assertThat(trace.get("runs_now").get(a).get("status").asInt()).isEqualTo(200);
      assertThat(text(trace.get("runs_now").get(a), "body")).contains("\"a3\"");
      assertThat(text(trace.get("redis_markers_now"), "a1")).startsWith("done:");
      // Each input record once: the offsets of the deliveries sent, all different.
      assertThat(
              trace.get("decisions").findValues("input_offset").stream()
                  .map(JsonNode::asLong)
                  .distinct())
          .hasSize(8);

      Deployment.ToolRun byId = d.tool("trace", "--request-id", "a1");
      assertThat(byId.code()).as(byId.err()).isZero();
      assertThat(byId.out())
          .contains("searching every partition of " + decisions)
          .contains("3 decisions")
          .contains("request_id=a1 applied by store, wrote to " + d.topics.events())
          .contains("request_id=a1 duplicate by redis, wrote nothing")
          .contains("request_id=a1 reused by redis (request_id_reused)")
          .contains("redis marker of a1 now: done:");

      Deployment.ToolRun later =
          d.tool("trace", "--run", a, "--since", Instant.now().plusSeconds(3600).toString());
      assertThat(later.out())
          .contains("from " + "20")
          .contains("trace of run " + a + ": 0 decisions");

      Deployment.ToolRun audit = d.tool("audit");
      assertThat(audit.code()).as(audit.out() + audit.err()).isZero();
      assertThat(audit.out()).contains("balanced: 9 input records");
      sinkRowsInTraceAndAudit(d, a, partition, first);
      PrometheusMeterRegistry registry = Metrics.newRegistry("audit");
      try (Pipeline pipeline = new Pipeline(ToolsConfig.fromEnv(d.env()))) {
        // Whole every third audit; on from where the last stopped in between.
        AuditWatch watch =
            new AuditWatch(
                pipeline,
                new DecisionLogSettings(true, decisions, -1),
                null,
                3,
                registry,
                System.out);
        watch.auditOnce();
        assertThat(registry.get(AuditWatch.UNACCOUNTED).gauge().value()).isZero();
        assertThat(registry.get(AuditWatch.CHECKED).gauge().value()).isEqualTo(9);
        d.post(a, "a5", T0.plusSeconds(5));
        awaitDecisions(infra, decisions, 10);
        watch.auditOnce();
        assertThat(registry.get(AuditWatch.CHECKED).gauge().value()).isEqualTo(10);
        assertThat(registry.get(AuditWatch.UNACCOUNTED).gauge().value()).isZero();
        loseRunEvents(infra, d, partition);
        // Read on: the records lost were audited before they were lost.
        watch.auditOnce();
        assertThat(registry.get(AuditWatch.UNACCOUNTED).gauge().value()).isZero();
        // Read whole: found.
        watch.auditOnce();
        assertThat(registry.scrape())
            .contains("runlane_audit_unaccounted_records{service=\"audit\"} 4.0");
      }

      Deployment.ToolRun lost = d.tool("audit");
      assertThat(lost.code()).as(lost.out()).isEqualTo(ExitCodes.UNACCOUNTED);
      assertThat(lost.out())
          .contains("UNACCOUNTED: 4 records")
          .contains(
              d.topics.webhooks()
                  + "/"
                  + partition
                  + "/"
                  + first.get("input_offset").asLong()
                  + " run_id="
                  + a
                  + " request_id=a1: applied, and its record is not in "
                  + d.topics.events());

      // A topic kept by size can delete young records: the audit starts at the oldest record it
      // still has (a6's), where the topic deleted some, and says so. (A deletion by hand on such
      // a topic is taken for retention too: D88.)
      keepBySize(infra, d.topics.events());
      d.post(a, "a6", T0.plusSeconds(6));
      awaitDecisions(infra, decisions, 11);
      Deployment.ToolRun bySize = d.tool("audit");
      assertThat(bySize.code()).as(bySize.out()).isZero();
      assertThat(bySize.out())
          .contains(d.topics.events() + " keeps 1073741824 bytes a partition (retention.bytes)")
          .contains("balanced: 1 input records");
    }
  }

  private static void keepBySize(Infra infra, String topic) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      admin
          .incrementalAlterConfigs(
              Map.of(
                  resource,
                  List.of(
                      new AlterConfigOp(
                          new ConfigEntry(TopicConfig.RETENTION_BYTES_CONFIG, "1073741824"),
                          AlterConfigOp.OpType.SET))))
          .all()
          .get();
    }
  }

  /**
   * A processor killed with SIGKILL while its transaction holds three decisions, then a reprocess:
   * each delivery is decided once per generation, the aborted attempt leaves no decision, the
   * reprocess's re-derived and re-emitted decisions carry its replay id, and each generation's
   * ledger balances.
   */
  @Test
  void aKillAndAReprocessLeaveOneDecisionPerDeliveryAndGenerationAndTheLedgerBalances(Infra infra)
      throws Exception {
    // A long commit interval keeps the transaction open between the decisions and the kill.
    try (Deployment d =
        new Deployment(infra, "ledgerkill", PARTITIONS, 1)
            .with("PROCESSOR_COMMIT_INTERVAL_MS", "9000")
            .startIngress()) {
      String decisions = d.env().get("TOPIC_DECISIONS");
      String k = "run-k";
      Instant from;
      try (ProcessorJvm first = d.startProcessorJvm(0);
          Jedis jedis = new Jedis(infra.redisUri())) {
        for (int i = 1; i <= 3; i++) {
          d.post(k, "k" + i, T0.plusSeconds(i));
        }
        awaitDecisions(infra, decisions, 3);
        from = Instant.now();
        for (int i = 4; i <= 6; i++) {
          d.post(k, "k" + i, T0.plusSeconds(i));
        }
        // Marked done, so decided; a done marker is written before the transaction commits
        // (design.md §6.2), and the log, read committed, shows the transaction still open.
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () ->
                    assertThat(
                            List.of("k4", "k5", "k6").stream()
                                .map(id -> String.valueOf(jedis.get(d.keyPrefix() + id))))
                        .allMatch(v -> v.startsWith("done:")));
        assertThat(Topics.readAll(infra.bootstrapServers(), decisions)).hasSize(3);
        assertThat(first.kill()).as("exit code after SIGKILL").isEqualTo(137);
        assertThat(Topics.readAll(infra.bootstrapServers(), decisions))
            .as("decisions committed when the kill came: the open transaction's were not")
            .hasSize(3);
      }
      d.with("PROCESSOR_COMMIT_INTERVAL_MS", "100").startProcessor(0);
      awaitDecisions(infra, decisions, 6);
      d.post(k, "k5", T0.plusSeconds(5)); // Sume's retry, once k5 is done
      awaitDecisions(infra, decisions, 7);

      List<JsonNode> live = decisionsOf(d, k, 0);
      // The successor trusts no done marker of its own task for a newer event: the attempt that
      // wrote it aborted (design.md §6.2).
      assertThat(live.subList(3, 6))
          .allSatisfy(n -> assertThat(text(n, "layer")).isEqualTo("store"));
      assertThat(text(live.get(6), "layer")).isEqualTo("redis");
      assertThat(live.stream().map(n -> n.get("input_offset").asLong()).distinct()).hasSize(7);
      assertThat(story(live))
          .containsExactly(
              "k1 applied",
              "k2 applied",
              "k3 applied",
              "k4 applied",
              "k5 applied",
              "k6 applied",
              "k5 duplicate");
      Deployment.ToolRun audit = d.tool("audit");
      assertThat(audit.code()).as(audit.out() + audit.err()).isZero();
      assertThat(audit.out()).contains("balanced: 7 input records");

      Deployment.ToolRun reprocess =
          d.tool("replay", "reprocess", "--from", from.toString(), "--timeout-seconds", "120");
      assertThat(reprocess.code()).as(reprocess.err()).isZero();
      d.awaitGeneration(1, Duration.ofSeconds(60));
      String replay = d.generation().replay().id();
      awaitDecisions(infra, decisions, 14);
      List<JsonNode> again = decisionsOf(d, k, 1);
      assertThat(again).allSatisfy(n -> assertThat(text(n, "replay")).isEqualTo(replay));
      // Received before T: re-derived, nothing written; from T: emitted once more, marked.
      assertThat(story(again))
          .containsExactly(
              "k1 re-derived",
              "k2 re-derived",
              "k3 re-derived",
              "k4 applied",
              "k5 applied",
              "k6 applied",
              "k5 duplicate");
      Deployment.ToolRun audited = d.tool("audit");
      assertThat(audited.code()).as(audited.out() + audited.err()).isZero();
      assertThat(audited.out())
          .contains("ledger of generation 1")
          .contains("balanced: 7 input records");
    }
  }

  /** Run {@code run}'s trace: generation {@code generation}'s decisions, in its order. */
  private static List<JsonNode> decisionsOf(Deployment d, String run, int generation)
      throws Exception {
    List<JsonNode> out = new ArrayList<>();
    json(d.tool("trace", "--run", run, "--json"))
        .get("decisions")
        .forEach(
            n -> {
              if (n.get("generation").asInt() == generation) {
                out.add(n);
              }
            });
    return out;
  }

  /** Each decision as "request_id outcome". */
  private static List<String> story(List<JsonNode> decisions) {
    return decisions.stream().map(n -> text(n, "request_id") + " " + text(n, "outcome")).toList();
  }

  // ---- The sink's rows in trace and audit (D94): kept apart from the scenarios above. ----

  /**
   * With the sink configured, {@code trace} shows each request id's row in {@code processed_events}
   * field by field (or "no row") and the sink's position on the run's partition; {@code audit}
   * finds the row of every applied event below that position, and a row deleted behind the sink's
   * back is a loss it names, with its metric.
   */
  private static void sinkRowsInTraceAndAudit(
      Deployment d, String run, int partition, JsonNode firstDecision) throws Exception {
    String table = "processed_events";
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(() -> rowCount(d, "SELECT count(*) FROM processed_events") == 3);
    JsonNode sink = json(d.tool("trace", "--run", run, "--json")).get("sink");
    assertThat(sink).as("the trace's sink part").isNotNull();
    assertThat(text(sink, "table")).isEqualTo(table);
    assertThat(text(sink, "database")).startsWith("jdbc:postgresql://");
    JsonNode a1 = sink.get("rows").get("a1");
    assertThat(text(a1, "run_id")).isEqualTo(run);
    assertThat(text(a1, "type")).isEqualTo("run.updated");
    assertThat(text(a1, "created_at")).isEqualTo(T0.plusSeconds(1).toString());
    assertThat(text(a1, "received_at"))
        .isEqualTo(Instant.ofEpochMilli(firstDecision.get("received_at").asLong()).toString());
    assertThat(text(a1, "topic")).isEqualTo(d.topics.events());
    assertThat(a1.get("kafka_partition").asInt()).isEqualTo(partition);
    assertThat(a1.get("kafka_offset").asLong())
        .as("the first record of the run's partition")
        .isZero();
    assertThat(a1.has("replay")).isFalse();
    assertThat(a1.get("data_bytes").asInt()).isPositive();
    assertThat(text(a1, "recorded_at")).startsWith("20");
    assertThat(sink.get("rows").get("a0").isNull()).as("a stale event has no row").isTrue();
    long a3 = sink.get("rows").get("a3").get("kafka_offset").asLong();
    assertThat(a3).isGreaterThan(sink.get("rows").get("a2").get("kafka_offset").asLong());
    long position = sink.get("positions").get(d.topics.events() + "/" + partition).asLong();
    assertThat(position)
        .as("the sink's next offset on the run's partition: past a3")
        .isGreaterThan(a3);
    assertThat(sink.toString()).doesNotContain("password");
    Deployment.ToolRun text = d.tool("trace", "--run", run);
    assertThat(text.out())
        .contains(
            "sink row of a1 in "
                + table
                + ": run_id="
                + run
                + " type=run.updated created_at="
                + T0.plusSeconds(1))
        .contains("sink row of a0 in " + table + ": no row")
        .contains(
            "sink position on "
                + d.topics.events()
                + "/"
                + partition
                + ": next offset "
                + position);

    sinkRowsInAudit(d, run, partition);
  }

  /**
   * {@code audit} with the sink: balanced while every row is there; a2's row deleted behind the
   * sink's back is a loss it names, with its metric. The row stays deleted: once the run's events
   * are lost below, a2 is unaccounted by its missing record, once.
   */
  private static void sinkRowsInAudit(Deployment d, String run, int partition) throws Exception {
    String table = "processed_events";
    Deployment.ToolRun balanced = d.tool("audit");
    assertThat(balanced.code()).as(balanced.out() + balanced.err()).isZero();
    assertThat(balanced.out())
        .contains("sink " + table + ": 3 applied events below its position, each with its row");

    // A loss behind the sink's back: a2's row deleted, its offset stays past it.
    sql(d, "DELETE FROM processed_events WHERE request_id = 'a2'");
    Deployment.ToolRun lost = d.tool("audit");
    assertThat(lost.code()).as(lost.out() + lost.err()).isEqualTo(ExitCodes.UNACCOUNTED);
    assertThat(lost.out())
        .contains("UNACCOUNTED: 1 records")
        .containsPattern(
            "/"
                + partition
                + "/\\d+ run_id="
                + run
                + " request_id=a2: applied, and its row is not in "
                + table);
    PrometheusMeterRegistry registry = Metrics.newRegistry("audit");
    try (Pipeline pipeline = new Pipeline(ToolsConfig.fromEnv(d.env()))) {
      new AuditWatch(
              pipeline,
              new DecisionLogSettings(true, d.env().get("TOPIC_DECISIONS"), -1),
              SinkConfig.fromEnv(d.env()),
              1,
              registry,
              System.out)
          .auditOnce();
    }
    assertThat(registry.scrape())
        .contains("runlane_audit_unaccounted_records{service=\"audit\"} 1.0");
  }

  private static long rowCount(Deployment d, String query) throws Exception {
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void sql(Deployment d, String statement) throws Exception {
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  // ---- end of the sink's block (D94) ----

  /** A loss: the records of run a's partition taken out of the events topic. */
  private static void loseRunEvents(Infra infra, Deployment d, int partition) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      // The events topic has the input's partition count, so the run's events are in this one.
      TopicPartition tp = new TopicPartition(d.topics.events(), partition);
      long end =
          admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
      admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(end))).all().get();
    }
  }

  private static void post(Deployment d, String run, String requestId, int second) {
    try {
      d.post(run, requestId, T0.plusSeconds(second));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** A record that is no envelope, straight into the input, as a broken producer would write. */
  private static void notAnEnvelope(Infra infra, Deployment d, String run) throws Exception {
    try (KafkaProducer<String, byte[]> p =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()),
            new StringSerializer(),
            new ByteArraySerializer())) {
      ProducerRecord<String, byte[]> r =
          new ProducerRecord<>(
              d.topics.webhooks(), run, "{not json".getBytes(StandardCharsets.UTF_8));
      RecordHeaders.put(r.headers(), RecordHeaders.REQUEST_ID, "bad");
      RecordHeaders.put(
          r.headers(), RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
      p.send(r).get(30, TimeUnit.SECONDS);
    }
  }

  private static void awaitDecisions(Infra infra, String topic, int n) {
    await()
        .atMost(Duration.ofSeconds(90))
        .dontCatchUncaughtExceptions()
        .until(() -> Topics.readAll(infra.bootstrapServers(), topic).size() >= n);
  }

  private static JsonNode json(Deployment.ToolRun run) throws Exception {
    assertThat(run.code()).as(run.err()).isZero();
    return JSON.readTree(run.out());
  }

  private static String text(JsonNode node, String field) {
    return node.get(field).asText();
  }
}
