package dev.runlane.processor;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.processor.dedup.RedisDedup.RedisDedupSettings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every setting of the processor, parsed eagerly from the environment; all problems are reported at
 * once (see {@link EnvReader}).
 */
public record ProcessorConfig(
    String bootstrapServers,
    URI redisUri,
    int port,
    String advertisedHost,
    String applicationId,
    Path stateDir,
    TopicNames topics,
    TopicSettings topicSettings,
    boolean dedupEnabled,
    String dedupKeyPrefix,
    Duration claimTtl,
    Duration doneTtl,
    Duration redisTimeout,
    Duration redisSlow,
    RedisFailureMode redisFailureMode,
    Duration redisBlockTimeout,
    int streamThreads,
    int batchSize,
    Duration batchInterval,
    Duration commitInterval,
    Duration reorderWindow,
    int reorderMaxHeld,
    Duration sessionTimeout,
    String processingGuarantee,
    boolean transactionalStateStores,
    Compression producerCompression,
    int maxBodyBytes,
    int rocksDbMemoryMb,
    Optional<String> groupInstanceId,
    String controlTopic,
    KafkaClientSettings kafkaClient,
    Optional<String> redisUsername,
    Optional<Secret> redisPassword,
    TopicPolicy topicPolicy) {

  private static final Logger log = LoggerFactory.getLogger(ProcessorConfig.class);

  /** Sume retries for about nine hours (10 attempts, backoff capped at one hour). */
  static final Duration SUME_RETRY_HORIZON = Duration.ofHours(9);

  /**
   * Below this, the memtables' half of the budget, shared by every store, would have each store
   * flush after a few hundred KB; a value this small is more likely a unit mistake.
   */
  static final int MIN_ROCKSDB_MEMORY_MB = 16;

  /** The cap on held events per task unless PROCESSOR_REORDER_MAX_HELD says otherwise. */
  public static final int DEFAULT_REORDER_MAX_HELD = 10_000;

  /**
   * Kafka's rule for a group instance id (legal characters, at most 249 of them), less room for the
   * "-N" that Streams appends per stream thread.
   */
  private static final Pattern GROUP_INSTANCE_ID = Pattern.compile("[a-zA-Z0-9._-]{1,240}");

  /** What the processor does while Redis does not answer. */
  public enum RedisFailureMode {
    /** Keep processing on the run store alone (counted, logged once per state change). */
    DEGRADE,
    /**
     * Hold the batch and retry Redis; after {@code REDIS_BLOCK_TIMEOUT_SECONDS}, fail the thread.
     */
    BLOCK
  }

  public static ProcessorConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    ProcessorConfig config =
        new ProcessorConfig(
            r.string("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
            r.uri("REDIS_URL", "redis://localhost:6379", Set.of("redis", "rediss")),
            r.port("PROCESSOR_PORT", 9081),
            r.string("PROCESSOR_ADVERTISED_HOST", "localhost"),
            r.string("PROCESSOR_APPLICATION_ID", "runlane-processor"),
            Path.of(r.string("PROCESSOR_STATE_DIR", "./data/processor")),
            TopicNames.fromEnv(r),
            TopicSettings.fromEnv(r),
            r.bool("DEDUP_REDIS_ENABLED", true),
            r.string("DEDUP_KEY_PREFIX", RedisDedupSettings.DEFAULT_KEY_PREFIX),
            r.seconds("DEDUP_CLAIM_TTL_SECONDS", 60, 1, 3600),
            r.seconds("DEDUP_DONE_TTL_SECONDS", 86_400, 60, 30L * 86_400),
            // Every call is made inside an open Streams transaction, which the broker aborts after
            // 10 s: one call started as the transaction's Redis budget (3 s) runs out must still
            // end well before (D42).
            r.millis("REDIS_TIMEOUT_MS", 1000, 10, 3000),
            // An answer slower than this is treated like none: the processor decides on the run
            // store for a second before asking again (D42).
            r.millis("REDIS_SLOW_MS", 250, 1, 3000),
            r.enumValue("REDIS_FAILURE_MODE", RedisFailureMode.class, RedisFailureMode.DEGRADE),
            // How long block mode holds a task's events for Redis before failing its thread. A
            // transaction waits at most its Redis budget; the rest of the wait is spread over
            // later transactions, which leave the events parked (D42).
            r.seconds("REDIS_BLOCK_TIMEOUT_SECONDS", 5, 1, 300),
            r.integer("PROCESSOR_THREADS", 1, 1, 256),
            r.integer("PROCESSOR_BATCH_SIZE", 256, 1, 10_000),
            r.millis("PROCESSOR_BATCH_INTERVAL_MS", 20, 1, 10_000),
            // Output is visible to read_committed readers only at commits: the interval is the
            // floor of end-to-end latency. 50 ms instead of 100 costs no throughput (D18).
            r.millis("PROCESSOR_COMMIT_INTERVAL_MS", 50, 10, 60_000),
            // Off by default: a window delays every applied event by its length, and only
            // consumers that need every transition in order want that. At most 5 s, so that a
            // stopping generation releases what it holds within the tools' 10 s quiet period
            // (D46).
            r.duration(
                "PROCESSOR_REORDER_WINDOW", Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5)),
            r.integer("PROCESSOR_REORDER_MAX_HELD", DEFAULT_REORDER_MAX_HELD, 1, 1_000_000),
            r.millis("PROCESSOR_SESSION_TIMEOUT_MS", 6000, 1000, 300_000),
            r.string("PROCESSING_GUARANTEE", "exactly_once_v2"),
            // Under exactly-once, a task that crashed is wiped and restored from its changelog
            // unless its stores are transactional (KIP-892, new in Kafka 4.4): 11.9-12.8 s vs
            // 7.4-8.7 s to recover a processor with 1M runs after kill -9 (D19). Off is the
            // escape hatch.
            r.bool("PROCESSOR_TRANSACTIONAL_STATE_STORES", true),
            r.enumValue("PROCESSOR_PRODUCER_COMPRESSION", Compression.class, Compression.LZ4),
            // Must be at least the ingress's INGRESS_MAX_BODY_BYTES: larger records are
            // dead-lettered by reference, never retried for ever.
            r.integer("PROCESSOR_MAX_BODY_BYTES", 1024 * 1024, 1024, 16 * 1024 * 1024),
            // One budget for the block cache and memtables of all run stores (RunStoreMemory);
            // 0 keeps Streams' per-store defaults, which grow with the partition count.
            r.integer("PROCESSOR_ROCKSDB_MEMORY_MB", 256, 0, 1024 * 1024),
            // Static group membership: a restarted instance with the same id takes its tasks
            // back at once instead of after the session timeout (D29). Unset: dynamic members.
            Optional.ofNullable(r.string("PROCESSOR_GROUP_INSTANCE_ID", null)),
            // Which generation runs is read from here (D35); written by the operator tools only.
            ControlTopic.nameFromEnv(r),
            // Security and any other setting for every Kafka client Streams and we make.
            KafkaClientSettings.fromEnv(r),
            // Apart from REDIS_URL, so that a Kubernetes Secret can hold the password alone; they
            // win over a user or password in the URL.
            Optional.ofNullable(r.string("REDIS_USERNAME", null)),
            // One value, commas and all (not a list like the signing secrets).
            r.isSet("REDIS_PASSWORD")
                ? Optional.of(Secret.of(r.string("REDIS_PASSWORD", "")))
                : Optional.empty(),
            TopicPolicy.fromEnv(r));
    if (!Set.of("exactly_once_v2", "at_least_once").contains(config.processingGuarantee())) {
      r.problem(
          "PROCESSING_GUARANTEE='"
              + config.processingGuarantee()
              + "' must be exactly_once_v2 or at_least_once");
    }
    if (config.claimTtl().compareTo(config.redisTimeout().multipliedBy(2)) < 0) {
      r.problem("DEDUP_CLAIM_TTL_SECONDS must be at least twice REDIS_TIMEOUT_MS");
    }
    if (config.redisSlow().compareTo(config.redisTimeout()) >= 0) {
      r.problem(
          "REDIS_SLOW_MS="
              + config.redisSlow().toMillis()
              + " must be below REDIS_TIMEOUT_MS="
              + config.redisTimeout().toMillis()
              + ": a call cannot be slow after it has timed out");
    }
    // A claim can be taken a drain before its decision (D45), and a decided id keeps it until the
    // next drain writes its done marker (D22).
    if (config.claimTtl().compareTo(config.batchInterval().multipliedBy(3)) < 0) {
      r.problem("DEDUP_CLAIM_TTL_SECONDS must be at least three times PROCESSOR_BATCH_INTERVAL_MS");
    }
    if (config.rocksDbMemoryMb() > 0 && config.rocksDbMemoryMb() < MIN_ROCKSDB_MEMORY_MB) {
      r.problem(
          "PROCESSOR_ROCKSDB_MEMORY_MB="
              + config.rocksDbMemoryMb()
              + " must be 0 (Streams' per-store defaults) or at least "
              + MIN_ROCKSDB_MEMORY_MB);
    }
    config
        .groupInstanceId()
        .filter(id -> !GROUP_INSTANCE_ID.matcher(id).matches())
        .ifPresent(
            id ->
                r.problem(
                    "PROCESSOR_GROUP_INSTANCE_ID='"
                        + id
                        + "' must be 1-240 characters of a-z, A-Z, 0-9, '.', '_' and '-'"));
    r.throwIfInvalid();
    config.warnings().forEach(w -> log.warn("risky setting: {}", w));
    return config;
  }

  /** Valid but risky combinations, logged at start. */
  public List<String> warnings() {
    List<String> warnings = new ArrayList<>();
    if (doneTtl.compareTo(SUME_RETRY_HORIZON) < 0) {
      warnings.add(
          "DEDUP_DONE_TTL_SECONDS="
              + doneTtl.toSeconds()
              + " is shorter than Sume's retry horizon (~9 h): late retries will be caught by the"
              + " run store only");
    }
    if (!"exactly_once_v2".equals(processingGuarantee)) {
      warnings.add(
          "PROCESSING_GUARANTEE="
              + processingGuarantee
              + ": effectively-once (G2) is not guaranteed; a crash can apply an event twice");
    }
    if (!dedupEnabled) {
      warnings.add("DEDUP_REDIS_ENABLED=false: every duplicate costs a run-store decision");
    }
    return warnings;
  }

  /**
   * The same settings on another admin port; 0 binds a free one. For embedding (tests, the local
   * stack, benchmarks), where the environment's 1-65535 rule is too strict.
   */
  public ProcessorConfig withPort(int port) {
    return new ProcessorConfig(
        bootstrapServers,
        redisUri,
        port,
        advertisedHost,
        applicationId,
        stateDir,
        topics,
        topicSettings,
        dedupEnabled,
        dedupKeyPrefix,
        claimTtl,
        doneTtl,
        redisTimeout,
        redisSlow,
        redisFailureMode,
        redisBlockTimeout,
        streamThreads,
        batchSize,
        batchInterval,
        commitInterval,
        reorderWindow,
        reorderMaxHeld,
        sessionTimeout,
        processingGuarantee,
        transactionalStateStores,
        producerCompression,
        maxBodyBytes,
        rocksDbMemoryMb,
        groupInstanceId,
        controlTopic,
        kafkaClient,
        redisUsername,
        redisPassword,
        topicPolicy);
  }

  public RedisDedupSettings redisDedupSettings() {
    return new RedisDedupSettings(
        redisUri,
        dedupKeyPrefix,
        claimTtl,
        doneTtl,
        redisTimeout,
        Duration.ofSeconds(1),
        redisSlow,
        redisUsername,
        redisPassword);
  }
}
