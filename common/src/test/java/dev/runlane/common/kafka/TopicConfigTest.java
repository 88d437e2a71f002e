package dev.runlane.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.EnvReader;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopicConfigTest {

  @Test
  void defaultsMatchTheDesign() {
    TopicNames names = TopicNames.fromEnv(new EnvReader(Map.of()));
    TopicSettings settings = TopicSettings.fromEnv(new EnvReader(Map.of()));

    assertThat(names).isEqualTo(TopicNames.defaults());
    assertThat(names.all())
        .containsExactly(
            "sume.webhooks", "sume.webhooks.dlq", "sume.events", "sume.events.stale", "sume.runs");
    assertThat(settings).isEqualTo(new TopicSettings(12, TopicSettings.BROKER_DEFAULT));
  }

  @Test
  void readsOverrides() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "TOPIC_EVENTS",
                "x.events",
                "TOPIC_PARTITIONS",
                "48",
                "TOPIC_REPLICATION_FACTOR",
                "3"));

    assertThat(TopicNames.fromEnv(env).events()).isEqualTo("x.events");
    assertThat(TopicSettings.fromEnv(env)).isEqualTo(new TopicSettings(48, (short) 3));
    env.throwIfInvalid();
  }

  @Test
  void reportsEveryBadValue() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "TOPIC_WEBHOOKS", "bad topic",
                "TOPIC_PARTITIONS", "0",
                "TOPIC_REPLICATION_FACTOR", "0"));
    TopicNames.fromEnv(env);
    TopicSettings.fromEnv(env);

    assertThatThrownBy(env::throwIfInvalid)
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("TOPIC_WEBHOOKS")
        .hasMessageContaining("TOPIC_PARTITIONS")
        .hasMessageContaining("TOPIC_REPLICATION_FACTOR");
  }

  @Test
  void rejectsRepeatedNames() {
    EnvReader env = new EnvReader(Map.of("TOPIC_STALE", "sume.events"));

    TopicNames.fromEnv(env);

    assertThat(env.problems()).singleElement().asString().contains("must all differ");
  }
}
