package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.topology.FaultHook;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * How the stages configure the services they run in this JVM: the tuning variables a run may pass
 * through to them, and the processor's configuration on a stage's topics.
 */
final class Services {
  /** The ingress's tuning variables a run may set in its environment (see passThrough). */
  static final List<String> INGRESS_TUNING =
      List.of("INGRESS_PRODUCER_LINGER_MS", "INGRESS_EVENT_LOOPS", "INGRESS_PRODUCER_COMPRESSION");

  /** The processor's tuning variables a run may set in its environment (see passThrough). */
  static final List<String> PROCESSOR_TUNING =
      List.of(
          "PROCESSOR_REORDER_WINDOW",
          "PROCESSOR_REORDER_MAX_HELD",
          "PROCESSOR_COMMIT_INTERVAL_MS",
          "PROCESSOR_BATCH_INTERVAL_MS",
          "PROCESSOR_BATCH_SIZE",
          "PROCESSOR_TRANSACTIONAL_STATE_STORES",
          "PROCESSOR_THREADS",
          "PROCESSOR_PRODUCER_COMPRESSION",
          "PROCESSOR_ROCKSDB_MEMORY_MB",
          "PROCESSOR_SESSION_TIMEOUT_MS",
          "PROCESSOR_SHUTDOWN_LEAVES_GROUP");

  /** Both: the stages that run the ingress and the processor together. */
  static final List<String> PIPELINE_TUNING =
      Stream.concat(INGRESS_TUNING.stream(), PROCESSOR_TUNING.stream()).toList();

  static final String DEDUP_KEY_PREFIX = "runlane:dedup:";

  /** How long a started processor may take to be RUNNING before a stage gives up. */
  static final Duration RUNNING_TIMEOUT = Duration.ofMinutes(2);

  private Services() {}

  /** The processor's settings as the run's tuning variables make them, on no particular topics. */
  static ProcessorConfig tunedProcessor() {
    Map<String, String> tuning = new HashMap<>();
    BenchContext.passThrough(tuning, PROCESSOR_TUNING);
    return ProcessorConfig.fromEnv(tuning);
  }

  static ProcessorConfig processorConfig(
      String bootstrap, EmbeddedRedis redis, String appId, TopicNames topics, boolean dedupOn)
      throws Exception {
    return processorConfig(bootstrap, redis, appId, topics, dedupOn, Map.of());
  }

  static ProcessorConfig processorConfig(
      String bootstrap,
      EmbeddedRedis redis,
      String appId,
      TopicNames topics,
      boolean dedupOn,
      Map<String, String> extra)
      throws Exception {
    Map<String, String> env = processorEnv(bootstrap, redis, appId, topics, dedupOn);
    env.putAll(extra);
    return ProcessorConfig.fromEnv(env).withPort(0);
  }

  /**
   * The processor's environment on a stage's topics, the run's tuning variables passed through:
   * what {@link #processorConfig} reads, and what a processor in a JVM of its own is started with.
   */
  static Map<String, String> processorEnv(
      String bootstrap, EmbeddedRedis redis, String appId, TopicNames topics, boolean dedupOn)
      throws Exception {
    Map<String, String> env =
        new HashMap<>(
            Map.ofEntries(
                Map.entry("KAFKA_BOOTSTRAP_SERVERS", bootstrap),
                Map.entry("REDIS_URL", redis.uri().toString()),
                Map.entry("PROCESSOR_APPLICATION_ID", appId),
                Map.entry(
                    "PROCESSOR_STATE_DIR",
                    Files.createTempDirectory("runlane-bench-" + appId).toString()),
                Map.entry("DEDUP_REDIS_ENABLED", Boolean.toString(dedupOn)),
                Map.entry("DEDUP_KEY_PREFIX", DEDUP_KEY_PREFIX),
                Map.entry("TOPIC_WEBHOOKS", topics.webhooks()),
                Map.entry("TOPIC_DLQ", topics.dlq()),
                Map.entry("TOPIC_EVENTS", topics.events()),
                Map.entry("TOPIC_STALE", topics.stale()),
                Map.entry("TOPIC_RUNS", topics.runs()),
                // Each run's decisions apart, so that its bytes per decision are its own (D86).
                Map.entry("TOPIC_DECISIONS", appId + ".decisions"),
                Map.entry("TOPIC_PARTITIONS", Integer.toString(BenchContext.PARTITIONS)),
                Map.entry("TOPIC_REPLICATION_FACTOR", "1")));
    BenchContext.passThrough(env, PROCESSOR_TUNING);
    return env;
  }

  /** {@code ProcessorApp.start} without a fault hook. */
  static ProcessorApp startProcessor(
      ProcessorConfig config, Dedup dedup, PrometheusMeterRegistry registry) {
    return ProcessorApp.start(config, dedup, registry, FaultHook.NONE);
  }
}
