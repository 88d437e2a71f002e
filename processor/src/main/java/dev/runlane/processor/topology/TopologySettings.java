package dev.runlane.processor.topology;

import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import java.time.Duration;

/** The part of the configuration the topology depends on. */
public record TopologySettings(
    TopicNames topics,
    int batchSize,
    Duration batchInterval,
    RedisFailureMode redisFailureMode,
    Duration redisBlockTimeout,
    int maxBodyBytes) {

  public static TopologySettings from(ProcessorConfig config) {
    return new TopologySettings(
        config.topics(),
        config.batchSize(),
        config.batchInterval(),
        config.redisFailureMode(),
        config.redisBlockTimeout(),
        config.maxBodyBytes());
  }
}
