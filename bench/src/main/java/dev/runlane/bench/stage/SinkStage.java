package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.Fill;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.config.Secret;
import dev.runlane.embedded.EmbeddedPostgres;
import dev.runlane.sink.SinkMetrics;
import dev.runlane.sink.db.SinkDatabase;
import dev.runlane.sink.event.EventDecoder;
import dev.runlane.sink.event.SinkEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The PostgreSQL sink (D54) draining a pre-filled {@code sume.events}-shaped topic into a real
 * PostgreSQL, next to a bare JDBC batch insert of the same rows into the same server in the same
 * run: how much of the database's own insert rate the sink's exactly-once bookkeeping (stored
 * offsets, the constraint, the guarded runs upsert) leaves.
 */
public final class SinkStage extends Stage {
  static final String STAGE = "sink";

  private static final int RUNS = 20_000;

  /** The bare insert's batch: the sink's default poll size, one transaction each. */
  private static final int BATCH = 2_000;

  private static final String BARE_INSERT =
      "INSERT INTO processed_events (request_id, run_id, type, created_at, created_at_nanos, data,"
          + " received_at, topic, kafka_partition, kafka_offset, replay)"
          + " VALUES (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?)";

  /** The runs' rows, as plainly: the batch's newest event of each run, no guard, no count. */
  private static final String BARE_UPSERT_RUN =
      "INSERT INTO runs (run_id, last_request_id, last_created_at, last_created_at_nanos,"
          + " last_type, applied_count, updated_at, data)"
          + " VALUES (?, ?, ?, ?, ?, 1, ?, ?::jsonb)"
          + " ON CONFLICT (run_id) DO UPDATE SET last_request_id = EXCLUDED.last_request_id,"
          + " last_created_at = EXCLUDED.last_created_at,"
          + " last_created_at_nanos = EXCLUDED.last_created_at_nanos,"
          + " last_type = EXCLUDED.last_type, updated_at = EXCLUDED.updated_at,"
          + " data = EXCLUDED.data";

  public SinkStage() {
    super(STAGE);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    int events = ctx.quick ? 100_000 : 500_000;
    String topic = "bench.sink.events";
    ctx.createTopics(topic);
    new Fill(27, Instant.parse("2026-12-02T10:00:00Z"), "run-", RUNS, 0)
        .write(ctx.bootstrap(), topic, events);
    try (EmbeddedPostgres postgres = EmbeddedPostgres.start()) {
      List<SinkEvent> rows = decodeAll(ctx.bootstrap(), topic, events);
      double eventsOnly = bareInsert(postgres, rows, false);
      double bare = bareInsert(postgres, rows, true);
      SinkRun sinkRun = sinkRun(postgres, ctx.bootstrap(), topic, events, "bench-sink");
      double sink = sinkRun.rate();
      double ratio = sink / bare;
      res.add(
          Row.figure(
                  STAGE,
                  "events/s into PostgreSQL through the sink (constraint, guarded runs, offsets)",
                  sink,
                  "events/s")
              .against(
                  "bare JDBC batches of the same rows (events inserted, runs upserted), same server",
                  bare,
                  ratio)
              .withTarget(">= 0.8x bare batches", ratio >= 0.8));
      res.add(
          Row.figure(
                  STAGE,
                  "events/s into PostgreSQL through the sink, against the events' rows alone",
                  sink,
                  "events/s")
              .against(
                  "bare JDBC batch insert of processed_events rows only",
                  eventsOnly,
                  sink / eventsOnly));
      res.note(
          STAGE,
          String.format(
              "%,d events over %,d runs (~%d B bodies), 12 partitions; bare insert: batches of %,d"
                  + " rows, one transaction each, rows decoded beforehand; the sink: from Kafka,"
                  + " %s",
              events, RUNS, Fill.BODY_BYTES, BATCH, postgres));
      res.note(STAGE, sinkRun.note());

      // The cost of a record PostgreSQL refuses (D61): the same events in chunks of 10,000 with
      // one such record after each, next to the same chunks without it, each sink from Kafka.
      String clean = "bench.sink.clean";
      String refused = "bench.sink.refused";
      ctx.createTopics(clean, refused);
      fillChunks(ctx.bootstrap(), clean, events, false);
      fillChunks(ctx.bootstrap(), refused, events, true);
      double cleanRate =
          sinkRun(postgres, ctx.bootstrap(), clean, events, "bench-sink-clean").rate();
      SinkRun refusedRun =
          sinkRun(postgres, ctx.bootstrap(), refused, events, "bench-sink-refused");
      res.add(
          Row.figure(
                  STAGE,
                  "events/s through the sink with one record PostgreSQL refuses per 10,000",
                  refusedRun.rate(),
                  "events/s")
              .against(
                  "the same events with none, same run", cleanRate, refusedRun.rate() / cleanRate));
      res.note(STAGE, "with refused records: " + refusedRun.note());
    }
  }

  /**
   * {@code events} events in chunks of 10,000 (each run's events newer chunk by chunk), with one
   * record PostgreSQL refuses (a number outside {@code numeric}'s range in its data) after each
   * chunk when {@code refused}.
   */
  private static void fillChunks(String bootstrap, String topic, int events, boolean refused) {
    int chunk = 10_000;
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            KafkaClients.fill(bootstrap), new StringSerializer(), new ByteArraySerializer())) {
      for (int c = 0; c * chunk < events; c++) {
        Instant from = Instant.parse("2026-12-02T10:00:00Z").plusSeconds(10L * chunk * c);
        new Fill(100 + c, from, "run-", RUNS, 0).write(bootstrap, topic, chunk);
        if (refused) {
          String run = "run-" + c;
          String body =
              "{\"request_id\":\"refused-"
                  + c
                  + "\",\"created_at\":\""
                  + from.plusMillis(chunk)
                  + "\",\"type\":\"run.progress\",\"data\":{\"run_id\":\""
                  + run
                  + "\",\"n\":1e200000}}";
          producer.send(new ProducerRecord<>(topic, run, body.getBytes(StandardCharsets.UTF_8)));
          producer.flush();
        }
      }
    }
  }

  /** The rows the sink will store, decoded as the sink decodes them. */
  private static List<SinkEvent> decodeAll(String bootstrap, String topic, int events)
      throws Exception {
    EventDecoder decoder = new EventDecoder();
    List<SinkEvent> rows = new ArrayList<>(events);
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while (rows.size() < events) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("read " + rows.size() + " of " + events);
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          rows.add(decoder.decode(r).event());
        }
      }
    }
    return rows;
  }

  /**
   * Events per second of plain JDBC batches into the sink's own schema: each event's row inserted
   * and, with {@code runs}, each run's newest state of the batch upserted, one transaction per
   * batch; none of the sink's guards or offsets.
   */
  private static double bareInsert(EmbeddedPostgres postgres, List<SinkEvent> rows, boolean runs)
      throws Exception {
    String db = postgres.createDatabase(runs ? "bench_bare_runs" : "bench_bare");
    try (SinkDatabase database =
            SinkDatabase.open(
                postgres.jdbcUrl(db),
                postgres.username(),
                Optional.ofNullable(postgres.password()).map(Secret::of),
                Duration.ofSeconds(60));
        Connection c = database.connection()) {
      c.setAutoCommit(false);
      long start = System.nanoTime();
      try (PreparedStatement insert = c.prepareStatement(BARE_INSERT);
          PreparedStatement upsert = c.prepareStatement(BARE_UPSERT_RUN)) {
        int inBatch = 0;
        Map<String, SinkEvent> newest = new HashMap<>();
        for (SinkEvent e : rows) {
          if (runs) {
            newest.merge(e.runId(), e, (a, b) -> SinkEvent.ORDER.compare(a, b) >= 0 ? a : b);
          }
          insert.setString(1, e.requestId());
          insert.setString(2, e.runId());
          insert.setString(3, e.type());
          insert.setTimestamp(4, Timestamp.from(e.createdAtMicros()));
          insert.setInt(5, e.createdAtNanos());
          insert.setString(6, e.data());
          insert.setTimestamp(7, Timestamp.from(e.updatedAt()));
          insert.setString(8, "bench.sink.events");
          insert.setInt(9, e.partition());
          insert.setLong(10, e.offset());
          insert.setNull(11, Types.VARCHAR);
          insert.addBatch();
          if (++inBatch == BATCH) {
            insert.executeBatch();
            upsertRuns(upsert, newest);
            c.commit();
            inBatch = 0;
          }
        }
        insert.executeBatch();
        upsertRuns(upsert, newest);
        c.commit();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          "  bare batches (%s): %,d events in %.1f s%n",
          runs ? "events and runs" : "events only", rows.size(), seconds);
      return rows.size() / seconds;
    }
  }

  private static void upsertRuns(PreparedStatement upsert, Map<String, SinkEvent> newest)
      throws SQLException {
    if (newest.isEmpty()) {
      return;
    }
    // Run id order, as the sink takes its row locks.
    for (SinkEvent e : new TreeMap<>(newest).values()) {
      upsert.setString(1, e.runId());
      upsert.setString(2, e.requestId());
      upsert.setTimestamp(3, Timestamp.from(e.createdAtMicros()));
      upsert.setInt(4, e.createdAtNanos());
      upsert.setString(5, e.type());
      upsert.setTimestamp(6, Timestamp.from(e.updatedAt()));
      upsert.setString(7, e.data());
      upsert.addBatch();
    }
    upsert.executeBatch();
    newest.clear();
  }

  /** The sink's rows per second, from its start until every event was stored, and its batches. */
  private record SinkRun(double rate, String note) {}

  private static SinkRun sinkRun(
      EmbeddedPostgres postgres, String bootstrap, String topic, int events, String group)
      throws Exception {
    try (RunningSink running = RunningSink.start(postgres, bootstrap, topic, group)) {
      PrometheusMeterRegistry registry = running.registry();
      long start = System.nanoTime();
      double before = written(registry);
      long deadline = start + Duration.ofMinutes(10).toNanos();
      while (written(registry) < events) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the sink stored " + written(registry) + " of " + events + " in 10 minutes");
        }
        LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      Timer batches = registry.find(SinkMetrics.BATCH_LATENCY).timer();
      String note =
          String.format(
              "the sink: %,.0f rows in %.1f s after it was ready (%,.0f before), %,d batches of"
                  + " %.0f rows on average, %.0f%% of the time in their database transactions",
              events - before,
              seconds,
              before,
              batches.count(),
              (double) events / batches.count(),
              100 * batches.totalTime(TimeUnit.SECONDS) / seconds);
      System.out.println("  " + note);
      return new SinkRun((events - before) / seconds, note);
    }
  }

  private static double written(PrometheusMeterRegistry registry) {
    return registry.find(SinkMetrics.EVENTS).tag("outcome", "written").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }
}
