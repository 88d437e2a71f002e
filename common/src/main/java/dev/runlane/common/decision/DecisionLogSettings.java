package dev.runlane.common.decision;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

/**
 * The decision log's settings (D86): {@code DECISION_LOG} ({@code on}, the default, or {@code off}:
 * no sink at all, nothing recorded), {@code TOPIC_DECISIONS} (default {@code sume.decisions}) and
 * {@code TOPIC_DECISIONS_RETENTION_MS} (default 7 days; -1 keeps for ever). The tools read the same
 * variables.
 *
 * @param enabled whether the processor records its decisions
 * @param topic the log's topic, keyed by run id
 * @param retentionMs its {@code retention.ms} when the processor creates it
 */
public record DecisionLogSettings(boolean enabled, String topic, long retentionMs) {
  public static final String ENV_ENABLED = "DECISION_LOG";
  public static final String ENV_TOPIC = "TOPIC_DECISIONS";
  public static final String ENV_RETENTION = "TOPIC_DECISIONS_RETENTION_MS";
  public static final String DEFAULT_TOPIC = "sume.decisions";

  /**
   * A week: past the longest an incident usually waits to be looked at, and past Sume's retry
   * horizon (~9 h), so that every delivery of one request id is in the log at once.
   */
  public static final long DEFAULT_RETENTION_MS = Duration.ofDays(7).toMillis();

  public static DecisionLogSettings defaults() {
    return new DecisionLogSettings(true, DEFAULT_TOPIC, DEFAULT_RETENTION_MS);
  }

  /**
   * Reads the settings; a bad value, or a topic named like one of {@code topics}, is recorded as a
   * problem on {@code env}.
   */
  public static DecisionLogSettings fromEnv(EnvReader env, TopicNames topics) {
    String mode = env.string(ENV_ENABLED, "on");
    if (!mode.equals("on") && !mode.equals("off")) {
      env.problem(ENV_ENABLED + "='" + mode + "' must be on or off");
    }
    String topic = env.string(ENV_TOPIC, DEFAULT_TOPIC);
    try {
      new TopicNames(topics.webhooks(), topics.dlq(), topics.events(), topics.stale(), topic);
    } catch (IllegalArgumentException e) {
      env.problem(ENV_TOPIC + "='" + topic + "' is not legal: " + e.getMessage());
    }
    if (topics.asSet().contains(topic)) {
      env.problem(ENV_TOPIC + "=" + topic + " must differ from every other TOPIC_* name");
    }
    long retention = env.longValue(ENV_RETENTION, DEFAULT_RETENTION_MS, -1, Long.MAX_VALUE);
    return new DecisionLogSettings(!mode.equals("off"), topic, retention);
  }

  /** The log's topic as the processor creates it: plain, with its own retention. */
  public NewTopic newTopic(TopicSettings settings) {
    NewTopic t = TopicEnsurer.plain(topic, settings);
    Map<String, String> configs = new LinkedHashMap<>();
    configs.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(retentionMs));
    return t.configs(configs);
  }
}
