package dev.runlane.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.EnvReader;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;

class TopicPolicyTest {

  @Test
  void byDefaultOnlyTheDlqIsKeptForEverAndTheRestIsTheBrokers() {
    TopicPolicy p = TopicPolicy.fromEnv(new EnvReader(Map.of()));

    assertThat(configs(p, "w", TopicPolicy.Role.WEBHOOKS)).isEmpty();
    assertThat(configs(p, "d", TopicPolicy.Role.DLQ)).containsEntry("retention.ms", "-1");
  }

  @Test
  void appliesWhatTheOperatorAsked() {
    TopicPolicy p =
        TopicPolicy.fromEnv(
            new EnvReader(
                Map.of(
                    "TOPIC_MIN_INSYNC_REPLICAS", "2",
                    "TOPIC_WEBHOOKS_RETENTION_MS", "-1",
                    "TOPIC_EVENTS_RETENTION_MS", "86400000")));

    assertThat(configs(p, "w", TopicPolicy.Role.WEBHOOKS))
        .containsEntry("retention.ms", "-1")
        .containsEntry("min.insync.replicas", "2");
    assertThat(configs(p, "e", TopicPolicy.Role.EVENTS)).containsEntry("retention.ms", "86400000");
  }

  @Test
  void retentionForEverIsLongerThanAnyAndShorterIsNamed() {
    assertThat(TopicPolicy.shorter(604_800_000L, -1)).isTrue();
    assertThat(TopicPolicy.shorter(-1, 604_800_000L)).isFalse();
    assertThat(TopicPolicy.shorter(1000, 2000)).isTrue();
    assertThat(TopicPolicy.shorter(2000, 2000)).isFalse();
  }

  @Test
  void moreInSyncReplicasThanReplicasIsRefused() {
    EnvReader env =
        new EnvReader(Map.of("TOPIC_MIN_INSYNC_REPLICAS", "3", "TOPIC_REPLICATION_FACTOR", "2"));
    TopicPolicy.fromEnv(env);
    assertThatThrownBy(env::throwIfInvalid)
        .hasMessageContaining(
            "TOPIC_MIN_INSYNC_REPLICAS must not exceed TOPIC_REPLICATION_FACTOR=2");
  }

  @Test
  void aBadValueNamesTheVariable() {
    EnvReader env = new EnvReader(Map.of("TOPIC_DLQ_RETENTION_MS", "forever"));
    TopicPolicy.fromEnv(env);
    assertThatThrownBy(env::throwIfInvalid)
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("TOPIC_DLQ_RETENTION_MS");
  }

  /** The configs {@code p} gives a new one-partition topic {@code name} in {@code role}. */
  private static Map<String, String> configs(TopicPolicy p, String name, TopicPolicy.Role role) {
    return p.apply(new NewTopic(name, Optional.of(1), Optional.empty()), role).configs();
  }
}
