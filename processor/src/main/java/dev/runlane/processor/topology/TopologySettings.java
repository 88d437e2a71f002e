package dev.runlane.processor.topology;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import java.time.Duration;

/**
 * The part of the configuration the topology depends on.
 *
 * @param topics the topics, with {@code webhooks} the generation's input
 * @param ownerPrefix what the tasks put before their task id in Redis markers (D35)
 * @param replay the ranges a replaying generation re-derives, or null
 * @param reorderWindow how long an event is held to be applied in order with those that arrive
 *     after it; zero holds nothing (D46)
 * @param maxHeld the most events a task holds; past it, the earliest-arrived are released early
 * @param decisionsTopic where each decision is recorded, or null with the decision log off (D86)
 * @param generation the generation's number, which each decision names
 */
public record TopologySettings(
    TopicNames topics,
    int batchSize,
    Duration batchInterval,
    RedisFailureMode redisFailureMode,
    Duration redisBlockTimeout,
    int maxBodyBytes,
    String ownerPrefix,
    Replay replay,
    Duration reorderWindow,
    int maxHeld,
    Duration decidedHorizon,
    String decisionsTopic,
    int generation) {

  /**
   * How long a task's record of decided ids keeps an id when the settings do not say: the default
   * {@code DEDUP_DONE_TTL_SECONDS}, the horizon of Redis's done markers (D68).
   */
  public static final Duration DEFAULT_DECIDED_HORIZON = Duration.ofDays(1);

  /** Settings without a decision log, of generation 0: most of the topology's own tests. */
  public TopologySettings(
      TopicNames topics,
      int batchSize,
      Duration batchInterval,
      RedisFailureMode redisFailureMode,
      Duration redisBlockTimeout,
      int maxBodyBytes,
      String ownerPrefix,
      Replay replay,
      Duration reorderWindow,
      int maxHeld,
      Duration decidedHorizon) {
    this(
        topics,
        batchSize,
        batchInterval,
        redisFailureMode,
        redisBlockTimeout,
        maxBodyBytes,
        ownerPrefix,
        replay,
        reorderWindow,
        maxHeld,
        decidedHorizon,
        null,
        0);
  }

  /** Generation 0's settings: no owner prefix, no replay. */
  public TopologySettings(
      TopicNames topics,
      int batchSize,
      Duration batchInterval,
      RedisFailureMode redisFailureMode,
      Duration redisBlockTimeout,
      int maxBodyBytes) {
    this(
        topics,
        batchSize,
        batchInterval,
        redisFailureMode,
        redisBlockTimeout,
        maxBodyBytes,
        "",
        null,
        Duration.ZERO,
        ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
        DEFAULT_DECIDED_HORIZON);
  }

  public static TopologySettings from(ProcessorConfig config) {
    return from(config, Generation.initial(config.applicationId(), config.topics().webhooks()));
  }

  /** The settings of {@code generation}: its input, its owner prefix, its replay ranges. */
  public static TopologySettings from(ProcessorConfig config, Generation generation) {
    TopicNames t = config.topics();
    return new TopologySettings(
        new TopicNames(generation.input(), t.dlq(), t.events(), t.stale(), t.runs()),
        config.batchSize(),
        config.batchInterval(),
        config.redisFailureMode(),
        config.redisBlockTimeout(),
        config.maxBodyBytes(),
        generation.ownerPrefix(),
        generation.replay(),
        config.reorderWindow(),
        config.reorderMaxHeld(),
        config.decidedRecord() ? config.doneTtl() : Duration.ZERO,
        config.decisionLog().enabled() ? config.decisionLog().topic() : null,
        generation.number());
  }

  /** Whether each decision is recorded in the decision log (D86). */
  boolean logsDecisions() {
    return decisionsTopic != null;
  }

  /** Whether tasks keep a record of decided ids (D68); only benchmarks measure without it. */
  boolean recordsDecided() {
    return !decidedHorizon.isZero();
  }

  /** Whether events are held to be applied in order: a reorder window is set (D46). */
  boolean reorders() {
    return !reorderWindow.isZero();
  }

  /**
   * Whether the input may hold records the tools copied from an older generation's input: only a
   * later generation's does (generation 0's owner prefix is empty), so generation 0 never looks for
   * their header.
   */
  boolean readsCopies() {
    return !ownerPrefix.isEmpty();
  }

  /** What to do with the input record at {@code offset} of {@code partition}. */
  Replay.Range rangeOf(int partition, long offset) {
    return replay == null ? Replay.Range.LIVE : replay.rangeOf(partition, offset);
  }
}
