package dev.runlane.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.ChildJvm;
import dev.runlane.embedded.FreePorts;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.Postgres;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A topic standing for {@code sume.events}, a database of the sink's own, and a producer writing
 * what the processor writes there (key: run id; value: the body; the ingress's headers).
 */
final class SinkHarness implements AutoCloseable {
  static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  final String bootstrap;
  final String topic;
  final String group;
  final int partitions;
  final Postgres postgres;
  final String database;
  private final KafkaProducer<String, byte[]> producer;
  private final List<Future<RecordMetadata>> sent = new ArrayList<>();

  SinkHarness(Infra infra, Postgres postgres, String name, int partitions) throws Exception {
    this.bootstrap = infra.bootstrapServers();
    this.topic = infra.uniqueName(name + ".events");
    this.group = infra.uniqueName(name + "-sink");
    this.partitions = partitions;
    this.postgres = postgres;
    this.database = postgres.createDatabase(infra.uniqueName(name).replace('-', '_'));
    try (Admin admin = admin()) {
      // Created and served before the first send: an idempotent producer's first batches to a
      // topic without leaders can fail for good (D10).
      TopicEnsurer.ensure(
          admin, List.of(new NewTopic(topic, partitions, (short) 1)), Duration.ofSeconds(30));
    }
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    this.producer = new KafkaProducer<>(p);
  }

  /** The environment of a sink on this harness. */
  Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("TOPIC_EVENTS", topic);
    env.put("SINK_GROUP_ID", group);
    env.put("SINK_DATABASE_URL", postgres.jdbcUrl(database));
    env.put("SINK_DATABASE_USER", postgres.username());
    if (postgres.password() != null) {
      env.put("SINK_DATABASE_PASSWORD", postgres.password());
    }
    env.put("SINK_DATABASE_STARTUP_TIMEOUT_SECONDS", "30");
    return env;
  }

  /** An in-process sink on a free admin port. */
  SinkApp startSink(PrometheusMeterRegistry registry) {
    SinkApp app = start(registry);
    app.awaitReady(Duration.ofSeconds(60));
    return app;
  }

  /** Starts a sink in this JVM on this harness; does not wait for it to be ready. */
  SinkApp start(PrometheusMeterRegistry registry) {
    return SinkApp.start(SinkConfig.fromEnv(env()).withPort(0), registry);
  }

  /**
   * Sends {@code perRun} events to each of {@code runs} runs ({@code run-<r>}, ids {@code
   * run-<r>-e<e>}), event by event across the runs, {@code e} milliseconds after T0; then flushes.
   */
  void sendAll(int runs, int perRun, String replay) {
    for (int e = 0; e < perRun; e++) {
      for (int r = 0; r < runs; r++) {
        String run = "run-" + r;
        send(run, run + "-e" + e, T0.plusMillis(e), replay);
      }
    }
    flush();
  }

  static PrometheusMeterRegistry registry() {
    return Metrics.newRegistry("sink");
  }

  static byte[] body(String runId, String requestId, Instant createdAt, String type) {
    return SumeEvents.event(runId, requestId, createdAt).type(type).data("step", requestId).bytes();
  }

  /** Sends an applied event as the processor emits it; {@code replay} marks a re-emission. */
  void send(String runId, String requestId, Instant createdAt, String replay) {
    ProducerRecord<String, byte[]> r =
        new ProducerRecord<>(topic, null, runId, body(runId, requestId, createdAt, "run.progress"));
    RecordHeaders.put(r.headers(), RecordHeaders.REQUEST_ID, requestId);
    RecordHeaders.put(r.headers(), RecordHeaders.CREATED_AT, createdAt.toString());
    RecordHeaders.put(
        r.headers(), RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
    if (replay != null) {
      RecordHeaders.put(r.headers(), Replay.HEADER, replay);
    }
    sent.add(producer.send(r));
  }

  /**
   * Sends a body as it is, keyed by {@code runId}, with the ingress's headers: what an older
   * ingress or another writer may have put in the events topic past today's envelope rules.
   */
  void sendRaw(String runId, String requestId, String json) {
    ProducerRecord<String, byte[]> r =
        new ProducerRecord<>(topic, null, runId, json.getBytes(StandardCharsets.UTF_8));
    RecordHeaders.put(r.headers(), RecordHeaders.REQUEST_ID, requestId);
    RecordHeaders.put(
        r.headers(), RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
    sent.add(producer.send(r));
  }

  /** Waits until every record sent is in the topic; throws if one is not. */
  void flush() {
    producer.flush();
    try {
      for (Future<RecordMetadata> f : sent) {
        f.get();
      }
    } catch (InterruptedException | ExecutionException e) {
      throw new IllegalStateException("a record was not written", e);
    } finally {
      sent.clear();
    }
  }

  Connection connect() throws SQLException {
    return connect(database);
  }

  /** A connection to another database of the same server. */
  Connection connect(String name) throws SQLException {
    return DriverManager.getConnection(
        postgres.jdbcUrl(name), postgres.username(), postgres.password());
  }

  /** Runs {@code statements} on the sink's database, in order. */
  void execute(String... statements) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    }
  }

  /** The one row {@code sql} returns on the sink's database, as JDBC reads its columns. */
  List<Object> onlyRow(String sql) throws SQLException {
    return onlyRow(database, sql);
  }

  /** The one row {@code sql} returns on database {@code name}; fails unless there is one row. */
  List<Object> onlyRow(String name, String sql) throws SQLException {
    try (Connection c = connect(name);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      assertThat(rs.next()).as("a row from %s", sql).isTrue();
      List<Object> row = new ArrayList<>();
      for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
        row.add(rs.getObject(i));
      }
      assertThat(rs.next()).as("one row only from %s", sql).isFalse();
      return row;
    }
  }

  /** The runs whose last applied event is not their event {@code e} ({@link #sendAll}'s ids). */
  long runsNotAtEvent(int e) throws SQLException {
    return count("SELECT count(*) FROM runs WHERE last_request_id <> run_id || '-e" + e + "'");
  }

  long count(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** {@code count(sql)}, or -1 while the database does not answer. */
  long countOrMinusOne(String sql) {
    try {
      return count(sql);
    } catch (SQLException e) {
      return -1;
    }
  }

  /** The stored offsets of the sink's group, by partition. */
  Map<Integer, Long> storedOffsets() throws SQLException {
    Map<Integer, Long> out = new HashMap<>();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT kafka_partition, next_offset FROM sink_offsets WHERE consumer_group = '"
                    + group
                    + "' AND topic = '"
                    + topic
                    + "'")) {
      while (rs.next()) {
        out.put(rs.getInt(1), rs.getLong(2));
      }
    }
    return out;
  }

  /** The topic's end offsets, by partition (only partitions that have records). */
  Map<Integer, Long> endOffsets() throws Exception {
    Map<TopicPartition, OffsetSpec> want = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      want.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<Integer, Long> out = new HashMap<>();
    try (Admin admin = admin()) {
      admin
          .listOffsets(want)
          .all()
          .get(30, TimeUnit.SECONDS)
          .forEach(
              (tp, info) -> {
                if (info.offset() > 0) {
                  out.put(tp.partition(), info.offset());
                }
              });
    }
    return out;
  }

  /** Waits until every record of the topic is covered by a stored offset. */
  void awaitCaughtUp(Duration timeout) throws Exception {
    Map<Integer, Long> end = endOffsets();
    await()
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptions()
        .until(() -> storedOffsets().equals(end));
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  /** A gauge's value, or NaN when it is not registered. */
  static double gauge(PrometheusMeterRegistry registry, String name) {
    var g = registry.find(name).gauge();
    return g == null ? Double.NaN : g.value();
  }

  /** A sink JVM of its own ({@link SinkMain}), its admin port and its log. */
  record ChildSink(Process process, int port, Path log) {
    /** Whether {@code /health/ready} answers 200 now. */
    boolean ready() {
      try {
        return HTTP.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                        .build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode()
            == 200;
      } catch (IOException e) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }

    /** Waits until ready; fails at once if the JVM exits. */
    ChildSink awaitReady(Duration timeout) {
      await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                assertThat(process.isAlive()).as("sink alive (log %s)", log).isTrue();
                return ready();
              });
      return this;
    }
  }

  /** Starts a sink JVM on this harness with {@code extraEnv} on top; does not wait for it. */
  ChildSink startChild(String name, Map<String, String> extraEnv) throws IOException {
    int port = FreePorts.next();
    ProcessBuilder pb =
        new ProcessBuilder(
            ChildJvm.command(
                SinkMain.class, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("KAFKA_") || k.startsWith("SINK_"));
    env.putAll(env());
    env.put("SINK_PORT", Integer.toString(port));
    env.putAll(extraEnv);
    Path log = Path.of("target", "sink-" + name + ".log");
    Files.createDirectories(log.getParent());
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    return new ChildSink(pb.start(), port, log);
  }

  /** The shared infrastructure, but with another broker: for a test that stops its broker. */
  static Infra onBroker(Infra infra, String bootstrap) {
    return new Infra() {
      @Override
      public String bootstrapServers() {
        return bootstrap;
      }

      @Override
      public URI redisUri() {
        return infra.redisUri();
      }

      @Override
      public Postgres postgres() {
        return infra.postgres();
      }

      @Override
      public String kafkaKind() {
        return "embedded";
      }

      @Override
      public String uniqueName(String prefix) {
        return infra.uniqueName(prefix);
      }
    };
  }

  static double counter(PrometheusMeterRegistry registry, String name, String outcome) {
    var c = registry.find(name).tag("outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(5));
  }
}
