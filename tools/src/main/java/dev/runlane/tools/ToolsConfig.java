package dev.runlane.tools;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * The tools' settings, read from the same variables as the services', so that an operator runs them
 * with the processor's environment.
 *
 * @param bootstrapServers {@code KAFKA_BOOTSTRAP_SERVERS}
 * @param applicationId {@code PROCESSOR_APPLICATION_ID}: the processors' base application id
 * @param topics {@code TOPIC_*}; {@code webhooks} names the pipeline in the control topic
 * @param topicSettings {@code TOPIC_REPLICATION_FACTOR} for the topics the tools create
 * @param controlTopic {@code TOPIC_CONTROL}
 * @param kafkaClient {@code KAFKA_CLIENT_*}: the same client settings the services use
 */
public record ToolsConfig(
    String bootstrapServers,
    String applicationId,
    TopicNames topics,
    TopicSettings topicSettings,
    String controlTopic,
    KafkaClientSettings kafkaClient) {

  /**
   * @throws dev.runlane.common.config.ConfigException naming every bad variable
   */
  public static ToolsConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    ToolsConfig config =
        new ToolsConfig(
            r.string("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
            r.string("PROCESSOR_APPLICATION_ID", "runlane-processor"),
            TopicNames.fromEnv(r),
            TopicSettings.fromEnv(r),
            ControlTopic.nameFromEnv(r),
            KafkaClientSettings.fromEnv(r));
    r.throwIfInvalid();
    return config;
  }

  /** Settings every Kafka client of the tools starts from. */
  public Map<String, Object> clientSettings() {
    Map<String, Object> m = kafkaClient.withBootstrap(bootstrapServers);
    m.put(CommonClientConfigs.CLIENT_ID_CONFIG, "runlane-tools");
    return m;
  }

  /** The key of this pipeline in the control topic: its base input topic. */
  public String pipeline() {
    return topics.webhooks();
  }
}
