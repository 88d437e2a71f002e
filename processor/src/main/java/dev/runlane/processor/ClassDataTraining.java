package dev.runlane.processor;

import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.runs.RunStoreMemory;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.RedisBudget;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.HostInfo;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The training run of a class-data-sharing archive: loads the classes a processor's start loads
 * (configuration, the Redis and Kafka clients, the topology and its Streams client, RocksDB, the
 * admin port, the envelope parser) with no broker and no Redis, then returns. Run once under {@code
 * -XX:ArchiveClassesAtExit=FILE} where the image is built; each start with {@code
 * -XX:SharedArchiveFile=FILE} then maps those classes instead of loading and verifying them, on the
 * CPU a restart is short of (D105). Nothing here connects anywhere: the clients point at port 1 of
 * the loopback address and are closed unused.
 */
public final class ClassDataTraining {
  private static final String BODY =
      "{\"request_id\":\"req-1\",\"created_at\":\"2026-11-29T10:00:00.123Z\","
          + "\"type\":\"run.completed\",\"data\":{\"run_id\":\"run-7\",\"status\":\"ok\"}}";

  private ClassDataTraining() {}

  public static void main(String[] args) throws Exception {
    run();
    // Kafka's and Jedis's threads are closed, but a lingering daemon must not hold the dump.
    System.exit(0);
  }

  /**
   * Loads what a start loads.
   *
   * @return the admin port's answer to {@code /health/live}, which a start's probe reads too
   */
  static int run() throws IOException {
    Path dir = Files.createTempDirectory("runlane-class-data");
    try {
      return load(dir);
    } finally {
      deleteRecursively(dir);
    }
  }

  private static int load(Path dir) throws IOException {
    ProcessorConfig config =
        ProcessorConfig.fromEnv(
            Map.of(
                "KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1",
                "REDIS_URL", "redis://127.0.0.1:1",
                "PROCESSOR_STATE_DIR", dir.resolve("state").toString()));
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    parseEnvelope();
    openRocksDb(dir.resolve("rocksdb"));
    try (RedisDedup dedup = new RedisDedup(config.redisDedupSettings(), registry);
        AdminServer server =
            AdminServer.start("127.0.0.1", 0, registry, () -> true, () -> false, Map.of())) {
      try {
        dedup.verifyAccess(); // refused at once: the client's connection path is loaded
      } catch (RuntimeException expected) {
        // nothing listens on port 1
      }
      Map<String, Object> kafka = config.kafkaClient().withBootstrap(config.bootstrapServers());
      Admin.create(kafka).close(Duration.ZERO);
      new ControlTopic.Reader(kafka, config.controlTopic(), config.topics().webhooks()).close();
      buildStreams(config, dedup, registry, new HostInfo("127.0.0.1", server.port()));
      return get(server.port(), "/health/live");
    } finally {
      registry.close();
    }
  }

  /** The topology and its Streams client, as a generation's start builds them; never started. */
  private static void buildStreams(
      ProcessorConfig config, RedisDedup dedup, PrometheusMeterRegistry registry, HostInfo self) {
    Generation generation = Generation.initial(config.applicationId(), config.topics().webhooks());
    RedisBudget budget = RedisBudget.perTransaction(RedisBudget.PER_TRANSACTION);
    Topology topology =
        GenerationStreams.topology(config, generation, dedup, registry, FaultHook.NONE, budget);
    Properties properties = StreamsSettings.of(config, self, generation.applicationId());
    KafkaStreams streams =
        new StreamsWithSafeMetrics(
            topology, properties, new TransactionAwareClients(budget, registry));
    streams.close(Duration.ofSeconds(10));
    RunStoreMemory.release(properties.getProperty(RunStoreMemory.POOL_CONFIG));
  }

  private static void parseEnvelope() {
    try {
      EnvelopeParser.withDefaults().parse(BODY.getBytes(StandardCharsets.UTF_8));
    } catch (EnvelopeException e) {
      throw new IllegalStateException("the training body no longer parses: " + e.getMessage(), e);
    }
  }

  private static void openRocksDb(Path dir) throws IOException {
    RocksDB.loadLibrary();
    Files.createDirectories(dir);
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, dir.toString())) {
      byte[] key = "run-7".getBytes(StandardCharsets.UTF_8);
      db.put(key, key);
      db.get(key);
    } catch (RocksDBException e) {
      throw new IOException("could not open RocksDB in " + dir, e);
    }
  }

  private static int get(int port, String path) throws IOException {
    HttpURLConnection c =
        (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
    try {
      c.getInputStream().readAllBytes();
      return c.getResponseCode();
    } finally {
      c.disconnect();
    }
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
