package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.Postgres;
import dev.runlane.embedded.RealInfra;
import dev.runlane.sink.SinkApp;
import dev.runlane.sink.SinkConfig;
import dev.runlane.sink.SinkMetrics;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@code runlane sink rejected | accept-gap} against a real sink database: what the sink set aside
 * is listed with its SQLSTATE; a gap is accepted only where there is one (D61, D63).
 */
@RealInfra
class SinkToolsIT {
  private static final Instant T0 = Instant.parse("2026-12-07T10:00:00Z");

  @Test
  void listsWhatTheSinkSetAsideAndAcceptsOnlyARealGap(Infra infra) throws Exception {
    Postgres pg = infra.postgres();
    try (Deployment d = new Deployment(infra, "sinktools", 1, 0)) {
      String database = pg.createDatabase(d.name.replace('-', '_'));
      d.with(SinkConfig.ENV_DATABASE_URL, pg.jdbcUrl(database))
          .with(SinkConfig.ENV_DATABASE_USER, pg.username())
          .with("SINK_GROUP_ID", d.name + "-sink");
      if (pg.password() != null) {
        d.with(SinkConfig.ENV_DATABASE_PASSWORD, pg.password());
      }
      String topic = d.topics.events();
      try (Admin admin =
          Admin.create(
              Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
        TopicEnsurer.ensure(
            admin, List.of(new NewTopic(topic, 1, (short) 1)), Duration.ofSeconds(30));
      }
      try (KafkaProducer<String, byte[]> producer = producer(infra)) {
        for (int e = 0; e < 10; e++) {
          send(producer, topic, SumeEvents.event("run-t", "ok-" + e, T0.plusMillis(e)).bytes());
        }
        send(
            producer,
            topic,
            ("{\"request_id\":\"huge-1\",\"created_at\":\"2026-12-07T10:00:01Z\","
                    + "\"data\":{\"run_id\":\"run-t\",\"n\":1e200000}}")
                .getBytes(StandardCharsets.UTF_8));
      }
      var registry = Metrics.newRegistry("sink");
      SinkApp sink = SinkApp.start(SinkConfig.fromEnv(d.env()).withPort(0), registry);
      try (sink) {
        sink.awaitReady(Duration.ofSeconds(60));
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    registry.find(SinkMetrics.EVENTS).tag("outcome", "rejected").counter().count()
                        == 1);
      }

      Deployment.ToolRun rejected = d.tool("sink", "rejected");
      assertThat(rejected.code()).isZero();
      assertThat(rejected.out())
          .contains("1 record(s)", topic + "/0/10", "request_id=huge-1", "SQLSTATE 22003");

      Deployment.ToolRun noGap = d.tool("sink", "accept-gap", "--partition", "0");
      assertThat(noGap.code()).as("refused: there is no gap").isEqualTo(ExitCodes.REFUSED);
      assertThat(noGap.err()).contains("no gap");

      try (KafkaProducer<String, byte[]> producer = producer(infra)) {
        for (int e = 10; e < 20; e++) {
          send(producer, topic, SumeEvents.event("run-t", "ok-" + e, T0.plusMillis(e)).bytes());
        }
      }
      try (Admin admin =
          Admin.create(
              Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
        admin
            .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(15)))
            .all()
            .get(30, TimeUnit.SECONDS);
      }
      Deployment.ToolRun dry = d.tool("sink", "accept-gap", "--partition", "0", "--dry-run");
      assertThat(dry.code()).isZero();
      assertThat(dry.out())
          .contains("stored offset 11, log start 15, log end 21: 4 record(s)", "dry run");
      assertThat(nextOffset(pg, database)).isEqualTo(11);

      Deployment.ToolRun accept = d.tool("sink", "accept-gap", "--partition", "0");
      assertThat(accept.code()).isZero();
      assertThat(nextOffset(pg, database)).isEqualTo(15);
      assertThat(
              single(
                  pg,
                  database,
                  "SELECT count(*) FROM sink_gaps WHERE from_offset = 11 AND to_offset = 15"))
          .isEqualTo(1);
      assertThat(d.tool("sink", "--help").code()).isZero();

      // A stored offset past the log end (the topic made again): --to says where to go on.
      try (Connection c =
              DriverManager.getConnection(pg.jdbcUrl(database), pg.username(), pg.password());
          Statement s = c.createStatement()) {
        s.executeUpdate("UPDATE sink_offsets SET next_offset = 300");
      }
      Deployment.ToolRun noTo = d.tool("sink", "accept-gap", "--partition", "0");
      assertThat(noTo.code()).isEqualTo(ExitCodes.REFUSED);
      assertThat(noTo.err()).contains("past the log end 21", "--to");
      Deployment.ToolRun back = d.tool("sink", "accept-gap", "--partition", "0", "--to", "15");
      assertThat(back.code()).isZero();
      assertThat(nextOffset(pg, database)).isEqualTo(15);
    }
  }

  private static long nextOffset(Postgres pg, String database) throws Exception {
    return single(pg, database, "SELECT next_offset FROM sink_offsets");
  }

  private static long single(Postgres pg, String database, String sql) throws Exception {
    try (Connection c =
            DriverManager.getConnection(pg.jdbcUrl(database), pg.username(), pg.password());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).as(sql).isTrue();
      return rs.getLong(1);
    }
  }

  private static void send(KafkaProducer<String, byte[]> producer, String topic, byte[] body)
      throws Exception {
    producer.send(new ProducerRecord<>(topic, "run-t", body)).get(30, TimeUnit.SECONDS);
  }

  private static KafkaProducer<String, byte[]> producer(Infra infra) {
    return new KafkaProducer<>(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()),
        new StringSerializer(),
        new ByteArraySerializer());
  }
}
