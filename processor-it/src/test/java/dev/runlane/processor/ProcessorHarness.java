package dev.runlane.processor;

import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.Infra;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;

/**
 * One processor under test on the real broker and a real Redis, with its own topics, application
 * id, Redis key namespace and state dir; restartable, so tests can stop it mid-stream.
 */
final class ProcessorHarness implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  final String bootstrap;
  final URI redisUri;
  final TopicNames topics;
  final String applicationId;
  final String keyPrefix;
  final Path stateDir;
  final KafkaProducer<String, byte[]> producer;
  PrometheusMeterRegistry registry;
  ProcessorApp app;
  private final int batchSize;
  private final Map<String, String> overrides = new LinkedHashMap<>();

  ProcessorHarness(String bootstrap, URI redisUri, String name, int batchSize) {
    this.bootstrap = bootstrap;
    this.redisUri = redisUri;
    this.batchSize = batchSize;
    this.topics =
        new TopicNames(
            name + ".webhooks", name + ".dlq", name + ".events", name + ".stale", name + ".runs");
    this.applicationId = name + "-processor";
    this.keyPrefix = "test:" + name + ":";
    try {
      this.stateDir = Files.createTempDirectory("runlane-" + name);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  /** A harness on the test's broker and shared Redis, named {@code name}, in batches of 16. */
  ProcessorHarness(Infra infra, String name) {
    this(infra.bootstrapServers(), infra.redisUri(), name, 16);
  }

  /**
   * A harness as {@link #ProcessorHarness(Infra, String)} under a unique name from {@code label}.
   */
  static ProcessorHarness unique(Infra infra, String label) {
    return new ProcessorHarness(infra, infra.uniqueName(label));
  }

  /** A harness as {@link #unique(Infra, String)} on a Redis of the test's own. */
  static ProcessorHarness unique(Infra infra, EmbeddedRedis redis, String label) {
    return new ProcessorHarness(infra.bootstrapServers(), redis.uri(), infra.uniqueName(label), 16);
  }

  /** Sets one more processor variable for the next {@link #start}. */
  ProcessorHarness with(String variable, String value) {
    overrides.put(variable, value);
    return this;
  }

  /** The decision log's topic of this harness (D86). */
  String decisions() {
    return topics.webhooks().replace(".webhooks", ".decisions");
  }

  ProcessorConfig config() {
    Map<String, String> env =
        new LinkedHashMap<>(
            Map.ofEntries(
                Map.entry("KAFKA_BOOTSTRAP_SERVERS", bootstrap),
                Map.entry("REDIS_URL", redisUri.toString()),
                Map.entry("PROCESSOR_APPLICATION_ID", applicationId),
                Map.entry("PROCESSOR_STATE_DIR", stateDir.toString()),
                Map.entry("DEDUP_KEY_PREFIX", keyPrefix),
                Map.entry("REDIS_TIMEOUT_MS", "500"),
                Map.entry("PROCESSOR_BATCH_SIZE", Integer.toString(batchSize)),
                Map.entry("TOPIC_WEBHOOKS", topics.webhooks()),
                Map.entry("TOPIC_DLQ", topics.dlq()),
                Map.entry("TOPIC_EVENTS", topics.events()),
                Map.entry("TOPIC_STALE", topics.stale()),
                Map.entry("TOPIC_RUNS", topics.runs()),
                Map.entry("TOPIC_DECISIONS", decisions()),
                Map.entry("TOPIC_PARTITIONS", "3"),
                Map.entry("TOPIC_REPLICATION_FACTOR", "1")));
    env.putAll(overrides);
    return ProcessorConfig.fromEnv(env).withPort(0);
  }

  ProcessorHarness start() {
    return start(FaultHook.NONE);
  }

  ProcessorHarness start(FaultHook hook) {
    ProcessorConfig config = config();
    registry = Metrics.newRegistry("processor");
    Dedup dedup = new RedisDedup(config.redisDedupSettings(), registry);
    app = ProcessorApp.start(config, dedup, registry, hook);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> app.streams().state() == KafkaStreams.State.RUNNING);
    return this;
  }

  void stop() {
    app.close();
    app = null;
  }

  static byte[] event(String runId, String requestId, Instant createdAt, String type) {
    return event(runId, requestId, createdAt, type, "");
  }

  static byte[] event(
      String runId, String requestId, Instant createdAt, String type, String padding) {
    SumeEvents.Event event =
        SumeEvents.event(runId, requestId, createdAt)
            .type(type)
            .data("created", createdAt.toString());
    if (!padding.isEmpty()) {
      event.data("padding", padding);
    }
    return event.bytes();
  }

  void send(String runId, String requestId, Instant createdAt) {
    try {
      sendAsync(runId, requestId, createdAt, "").get();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Sends without waiting for the ack; {@link #flush()} waits for all of them. */
  java.util.concurrent.Future<?> sendAsync(
      String runId, String requestId, Instant createdAt, String padding) {
    return sendAsync(runId, requestId, createdAt, padding, null);
  }

  /** As {@link #sendAsync(String, String, Instant, String)}, telling {@code acked} of the ack. */
  java.util.concurrent.Future<?> sendAsync(
      String runId, String requestId, Instant createdAt, String padding, Callback acked) {
    ProducerRecord<String, byte[]> record =
        new ProducerRecord<>(
            topics.webhooks(), runId, event(runId, requestId, createdAt, "run.updated", padding));
    record
        .headers()
        .add(
            "received_at",
            Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8))
        .add("request_id", requestId.getBytes(StandardCharsets.UTF_8));
    return producer.send(record, acked);
  }

  void flush() {
    producer.flush();
  }

  /** A GET on the running processor's admin port. */
  HttpResponse<byte[]> get(String path) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  /** A GET on the admin port with an {@code Authorization} header (PROCESSOR_RUNS_TOKEN). */
  HttpResponse<byte[]> get(String path, String authorization) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.adminPort() + path))
            .header("Authorization", authorization)
            .build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  /** The liveness probe's status code. */
  int live() throws Exception {
    return get("/health/live").statusCode();
  }

  /** A header of an output record, as text. */
  static String header(ConsumerRecord<String, byte[]> record, String name) {
    return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  /** Every decision counted so far, whatever its outcome. */
  double decided() {
    return registry.find(ProcessorMetrics.EVENTS).counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /** The counter {@code name}, 0 before it is registered. */
  double counter(String name) {
    Counter c = registry.find(name).counter();
    return c == null ? 0 : c.count();
  }

  double count(String outcome, String layer) {
    var c =
        registry
            .find("runlane.processor.events")
            .tag("outcome", outcome)
            .tag("layer", layer)
            .counter();
    return c == null ? 0 : c.count();
  }

  /** A read_committed reader that keeps what it has read across calls. */
  final class Reader implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    final List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();

    Reader(String topic) {
      consumer =
          new KafkaConsumer<>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  bootstrap,
                  ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                  "read_committed",
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                  "earliest",
                  ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                  false),
              new StringDeserializer(),
              new ByteArrayDeserializer());
      this.topic = topic;
    }

    private final String topic;

    /** Assigns every partition once the topic exists (the processor creates it at start). */
    private boolean assigned() {
      if (!consumer.assignment().isEmpty()) {
        return true;
      }
      var infos = consumer.partitionsFor(topic);
      if (infos == null || infos.isEmpty()) {
        return false;
      }
      var partitions =
          infos.stream()
              .map(i -> new org.apache.kafka.common.TopicPartition(topic, i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      return true;
    }

    List<ConsumerRecord<String, byte[]>> poll() {
      if (!assigned()) {
        return records;
      }
      consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      return records;
    }

    /**
     * Reads on; true once every partition is read to its end (for read_committed, the last stable
     * offset: everything committed so far).
     */
    boolean caughtUp() {
      if (!assigned()) {
        return false;
      }
      poll();
      return consumer.endOffsets(consumer.assignment()).entrySet().stream()
          .allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    }

    List<String> requestIds() {
      return records.stream()
          .map(
              r -> new String(r.headers().lastHeader("request_id").value(), StandardCharsets.UTF_8))
          .toList();
    }

    @Override
    public void close() {
      consumer.close();
    }
  }

  @Override
  public void close() {
    if (app != null) {
      app.close();
    }
    producer.close();
  }
}
