package dev.runlane.common.kafka;

import dev.runlane.common.config.EnvReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The topic settings an operator chooses, applied when a service creates a topic, and checked on
 * topics that exist: {@code TOPIC_MIN_INSYNC_REPLICAS} for every topic, and the retention of the
 * input ({@code TOPIC_WEBHOOKS_RETENTION_MS}: the replay horizon), of the DLQ ({@code
 * TOPIC_DLQ_RETENTION_MS}, by default never deleted: a dead-lettered webhook was answered 2xx and
 * lives only there, D37) and of the events ({@code TOPIC_EVENTS_RETENTION_MS}). Unset means the
 * broker's default.
 */
public record TopicPolicy(
    OptionalInt minInsyncReplicas,
    OptionalLong webhooksRetentionMs,
    long dlqRetentionMs,
    OptionalLong eventsRetentionMs) {

  /** What a topic is for, which decides its retention. */
  public enum Role {
    WEBHOOKS,
    DLQ,
    EVENTS,
    OTHER
  }

  public static TopicPolicy defaults() {
    return new TopicPolicy(OptionalInt.empty(), OptionalLong.empty(), -1, OptionalLong.empty());
  }

  public static TopicPolicy fromEnv(EnvReader env) {
    int rf = env.integer(TopicSettings.ENV_REPLICATION_FACTOR, -1, -1, Short.MAX_VALUE);
    if (env.isSet("TOPIC_MIN_INSYNC_REPLICAS")
        && rf > 0
        && env.integer("TOPIC_MIN_INSYNC_REPLICAS", 1, 1, Short.MAX_VALUE) > rf) {
      env.problem(
          "TOPIC_MIN_INSYNC_REPLICAS must not exceed TOPIC_REPLICATION_FACTOR="
              + rf
              + ": every acks=all write would fail");
    }
    return new TopicPolicy(
        env.isSet("TOPIC_MIN_INSYNC_REPLICAS")
            ? OptionalInt.of(env.integer("TOPIC_MIN_INSYNC_REPLICAS", 1, 1, Short.MAX_VALUE))
            : OptionalInt.empty(),
        retention(env, "TOPIC_WEBHOOKS_RETENTION_MS"),
        retention(env, "TOPIC_DLQ_RETENTION_MS").orElse(-1),
        retention(env, "TOPIC_EVENTS_RETENTION_MS"));
  }

  private static OptionalLong retention(EnvReader env, String name) {
    return env.isSet(name)
        ? OptionalLong.of(env.longValue(name, -1, -1, Long.MAX_VALUE))
        : OptionalLong.empty();
  }

  /** The retention this policy sets for a topic of {@code role}, if any. */
  public OptionalLong retentionMs(Role role) {
    return switch (role) {
      case WEBHOOKS -> webhooksRetentionMs;
      case DLQ -> OptionalLong.of(dlqRetentionMs);
      case EVENTS -> eventsRetentionMs;
      case OTHER -> OptionalLong.empty();
    };
  }

  /** {@code topic} with this policy's configs added. */
  public NewTopic apply(NewTopic topic, Role role) {
    Map<String, String> configs = new LinkedHashMap<>();
    if (topic.configs() != null) {
      configs.putAll(topic.configs());
    }
    minInsyncReplicas.ifPresent(
        n -> configs.put(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(n)));
    retentionMs(role)
        .ifPresent(ms -> configs.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(ms)));
    return topic.configs(configs);
  }

  /**
   * What is weaker on topics that exist than this policy and {@code replicationFactor} ask for: one
   * line each, with the command that fixes it. A service logs them at start and goes on: the topics
   * are the operator's.
   */
  public List<String> weaker(
      Admin admin, Map<String, Role> topics, short replicationFactor, String bootstrap) {
    List<String> out = new ArrayList<>();
    try {
      Map<String, TopicDescription> described =
          admin.describeTopics(topics.keySet()).allTopicNames().get(30, TimeUnit.SECONDS);
      List<ConfigResource> resources =
          topics.keySet().stream()
              .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
              .toList();
      Map<ConfigResource, Config> configs =
          admin.describeConfigs(resources).all().get(30, TimeUnit.SECONDS);
      for (Map.Entry<String, Role> e : topics.entrySet()) {
        String topic = e.getKey();
        TopicDescription d = described.get(topic);
        Config c = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic));
        if (d == null || c == null) {
          continue;
        }
        int rf = d.partitions().get(0).replicas().size();
        if (replicationFactor > 0 && rf < replicationFactor) {
          out.add(
              "topic "
                  + topic
                  + " has replication factor "
                  + rf
                  + ", below TOPIC_REPLICATION_FACTOR="
                  + replicationFactor
                  + ": reassign its partitions (kafka-reassign-partitions) to add replicas");
        }
        if (minInsyncReplicas.isPresent()) {
          int isr = Integer.parseInt(c.get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG).value());
          if (isr < minInsyncReplicas.getAsInt()) {
            out.add(
                fix(
                    topic,
                    TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG,
                    isr,
                    "TOPIC_MIN_INSYNC_REPLICAS",
                    minInsyncReplicas.getAsInt(),
                    bootstrap));
          }
        }
        OptionalLong wanted = retentionMs(e.getValue());
        if (wanted.isPresent()) {
          long has = Long.parseLong(c.get(TopicConfig.RETENTION_MS_CONFIG).value());
          if (shorter(has, wanted.getAsLong())) {
            out.add(
                fix(
                    topic,
                    TopicConfig.RETENTION_MS_CONFIG,
                    has,
                    variable(e.getValue()),
                    wanted.getAsLong(),
                    bootstrap));
          }
        }
      }
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      out.add("could not check the topics' settings: " + e);
    }
    return out;
  }

  /** Whether retention {@code has} keeps less than {@code wanted} (-1: for ever). */
  static boolean shorter(long has, long wanted) {
    if (wanted < 0) {
      return has >= 0;
    }
    return has >= 0 && has < wanted;
  }

  private static String variable(Role role) {
    return switch (role) {
      case WEBHOOKS -> "TOPIC_WEBHOOKS_RETENTION_MS";
      case DLQ -> "TOPIC_DLQ_RETENTION_MS";
      case EVENTS -> "TOPIC_EVENTS_RETENTION_MS";
      case OTHER -> "?";
    };
  }

  private static String fix(
      String topic, String config, Object has, String variable, Object wanted, String bootstrap) {
    return "topic "
        + topic
        + " has "
        + config
        + "="
        + has
        + ", weaker than "
        + variable
        + "="
        + wanted
        + ": kafka-configs --bootstrap-server "
        + bootstrap
        + " --alter --entity-type topics --entity-name "
        + topic
        + " --add-config "
        + config
        + "="
        + wanted;
  }
}
