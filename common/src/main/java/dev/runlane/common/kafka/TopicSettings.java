package dev.runlane.common.kafka;

import dev.runlane.common.config.EnvReader;

/**
 * How a service creates a missing topic.
 *
 * @param partitions the partition count, 1-10000 (over-partition: adding partitions later needs the
 *     scaling procedure)
 * @param replicationFactor the replication factor, or {@link #BROKER_DEFAULT} (-1) to use the
 *     broker's {@code default.replication.factor}, which suits both a one-broker dev stack and a
 *     production cluster
 */
public record TopicSettings(int partitions, short replicationFactor) {

  public static final String ENV_PARTITIONS = "TOPIC_PARTITIONS";
  public static final String ENV_REPLICATION_FACTOR = "TOPIC_REPLICATION_FACTOR";
  public static final int DEFAULT_PARTITIONS = 12;
  public static final int MAX_PARTITIONS = 10_000;

  /** Replication factor -1: the broker's {@code default.replication.factor} (KIP-464). */
  public static final short BROKER_DEFAULT = -1;

  public TopicSettings {
    if (partitions < 1 || partitions > MAX_PARTITIONS) {
      throw new IllegalArgumentException("partitions must be 1-" + MAX_PARTITIONS);
    }
    if (replicationFactor < 1 && replicationFactor != BROKER_DEFAULT) {
      throw new IllegalArgumentException("replicationFactor must be -1 or at least 1");
    }
  }

  /** 12 partitions, the broker's default replication factor. */
  public static TopicSettings defaults() {
    return new TopicSettings(DEFAULT_PARTITIONS, BROKER_DEFAULT);
  }

  /**
   * Reads {@code TOPIC_PARTITIONS} (default 12, 1-10000) and {@code TOPIC_REPLICATION_FACTOR}
   * (default -1 = broker default, else 1-32767); problems are recorded on {@code env}.
   */
  public static TopicSettings fromEnv(EnvReader env) {
    int partitions = env.integer(ENV_PARTITIONS, DEFAULT_PARTITIONS, 1, MAX_PARTITIONS);
    int rf = env.integer(ENV_REPLICATION_FACTOR, BROKER_DEFAULT, BROKER_DEFAULT, Short.MAX_VALUE);
    if (rf == 0) {
      env.problem(ENV_REPLICATION_FACTOR + "=0 is not valid (-1 = broker default, or 1-32767)");
      rf = BROKER_DEFAULT;
    }
    return new TopicSettings(partitions, (short) rf);
  }
}
