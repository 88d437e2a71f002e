package dev.runlane.processor;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import dev.runlane.common.decision.DecisionLogSettings;
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
    boolean shutdownLeavesGroup,
    String controlTopic,
    KafkaClientSettings kafkaClient,
    Optional<String> redisUsername,
    Optional<Secret> redisPassword,
    Optional<String> redisSentinelUsername,
    Optional<Secret> redisSentinelPassword,
    TopicPolicy topicPolicy,
    boolean decidedRecord,
    Optional<Secret> runsToken,
    DecisionLogSettings decisionLog) {

  private static final Logger log = LoggerFactory.getLogger(ProcessorConfig.class);

  /** Sume retries for about nine hours (10 attempts, backoff capped at one hour). */
  static final Duration SUME_RETRY_HORIZON = Duration.ofHours(9);

  /**
   * Below this, the memtables' half of the budget, shared by every store, would have each store
   * flush after a few hundred KB; a value this small is more likely a unit mistake.
   */
  static final int MIN_ROCKSDB_MEMORY_MB = 16;

  /** The shortest bearer token PROCESSOR_RUNS_TOKEN may be. */
  static final int MIN_RUNS_TOKEN_CHARS = 32;

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

  /**
   * Reads every setting from {@code env}, then checks how they combine.
   *
   * @throws ConfigException listing every problem found
   */
  public static ProcessorConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    ProcessorConfig config = ProcessorEnv.read(r);
    config.checkGuarantee(r);
    config.checkRedisTimes(r);
    config.checkMemoryAndInstanceId(r);
    config.checkRunsToken(r);
    r.throwIfInvalid();
    config.warnings().forEach(w -> log.warn("risky setting: {}", w));
    return config;
  }

  private void checkGuarantee(EnvReader r) {
    if (!Set.of("exactly_once_v2", "at_least_once").contains(processingGuarantee)) {
      r.problem(
          "PROCESSING_GUARANTEE='"
              + processingGuarantee
              + "' must be exactly_once_v2 or at_least_once");
    }
  }

  /** The Redis times that only work together: the claim TTL, the timeout and the slow bound. */
  private void checkRedisTimes(EnvReader r) {
    if (claimTtl.compareTo(redisTimeout.multipliedBy(2)) < 0) {
      r.problem("DEDUP_CLAIM_TTL_SECONDS must be at least twice REDIS_TIMEOUT_MS");
    }
    if (redisSlow.compareTo(redisTimeout) >= 0) {
      r.problem(
          "REDIS_SLOW_MS="
              + redisSlow.toMillis()
              + " must be below REDIS_TIMEOUT_MS="
              + redisTimeout.toMillis()
              + ": a call cannot be slow after it has timed out");
    }
    // A claim can be taken a drain before its decision (D45), and a decided id keeps it until the
    // next drain writes its done marker (D22).
    if (claimTtl.compareTo(batchInterval.multipliedBy(3)) < 0) {
      r.problem("DEDUP_CLAIM_TTL_SECONDS must be at least three times PROCESSOR_BATCH_INTERVAL_MS");
    }
  }

  /** The run stores' memory budget and the group instance id, which a range cannot check. */
  private void checkMemoryAndInstanceId(EnvReader r) {
    if (rocksDbMemoryMb > 0 && rocksDbMemoryMb < MIN_ROCKSDB_MEMORY_MB) {
      r.problem(
          "PROCESSOR_ROCKSDB_MEMORY_MB="
              + rocksDbMemoryMb
              + " must be 0 (Streams' per-store defaults) or at least "
              + MIN_ROCKSDB_MEMORY_MB);
    }
    groupInstanceId
        .filter(id -> !GROUP_INSTANCE_ID.matcher(id).matches())
        .ifPresent(
            id ->
                r.problem(
                    "PROCESSOR_GROUP_INSTANCE_ID='"
                        + id
                        + "' must be 1-240 characters of a-z, A-Z, 0-9, '.', '_' and '-'"));
  }

  /**
   * A bearer token anyone could guess protects nothing: at least {@link #MIN_RUNS_TOKEN_CHARS}
   * characters, e.g. {@code openssl rand -hex 32} (D80). The message never holds the value.
   */
  private void checkRunsToken(EnvReader r) {
    runsToken
        .filter(t -> t.reveal().length() < MIN_RUNS_TOKEN_CHARS)
        .ifPresent(
            t ->
                r.problem(
                    "PROCESSOR_RUNS_TOKEN must be at least "
                        + MIN_RUNS_TOKEN_CHARS
                        + " characters (openssl rand -hex 32)"));
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
    return copy(port, decidedRecord, decisionLog);
  }

  /**
   * The same settings without the tasks' record of decided ids, for benchmarks that measure what it
   * costs (D68). No environment variable turns it off: without it, a copy decided while Redis
   * cannot answer may be listed stale although it was applied.
   */
  public ProcessorConfig withoutDecidedRecord() {
    return copy(port, false, decisionLog);
  }

  /**
   * The same settings with the decision log off, for benchmarks that measure what it costs beside
   * it in the same run (D86); {@code DECISION_LOG=off} is the operator's way.
   */
  public ProcessorConfig withoutDecisionLog() {
    return copy(
        port,
        decidedRecord,
        new DecisionLogSettings(false, decisionLog.topic(), decisionLog.retentionMs()));
  }

  private ProcessorConfig copy(int port, boolean decidedRecord, DecisionLogSettings decisionLog) {
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
        shutdownLeavesGroup,
        controlTopic,
        kafkaClient,
        redisUsername,
        redisPassword,
        redisSentinelUsername,
        redisSentinelPassword,
        topicPolicy,
        decidedRecord,
        runsToken,
        decisionLog);
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
        redisPassword,
        redisSentinelUsername,
        redisSentinelPassword);
  }
}
