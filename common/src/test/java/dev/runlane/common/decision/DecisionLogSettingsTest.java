package dev.runlane.common.decision;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.kafka.TopicNames;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DecisionLogSettingsTest {
  @Test
  void onByDefaultWithItsTopicAndAWeekOfRetention() {
    EnvReader env = new EnvReader(Map.of());
    assertThat(DecisionLogSettings.fromEnv(env, TopicNames.defaults()))
        .isEqualTo(new DecisionLogSettings(true, "sume.decisions", 604_800_000L));
    assertThat(env.problems()).isEmpty();
  }

  @Test
  void offAndAnOwnTopicAndRetention() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "DECISION_LOG", "off",
                "TOPIC_DECISIONS", "x.decisions",
                "TOPIC_DECISIONS_RETENTION_MS", "-1"));
    assertThat(DecisionLogSettings.fromEnv(env, TopicNames.defaults()))
        .isEqualTo(new DecisionLogSettings(false, "x.decisions", -1));
  }

  @Test
  void namesEveryBadVariable() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "DECISION_LOG", "maybe",
                "TOPIC_DECISIONS", "sume.events",
                "TOPIC_DECISIONS_RETENTION_MS", "soon"));
    DecisionLogSettings.fromEnv(env, TopicNames.defaults());
    assertThat(env.problems())
        .anyMatch(p -> p.startsWith("DECISION_LOG='maybe' must be on or off"))
        .anyMatch(p -> p.startsWith("TOPIC_DECISIONS=sume.events must differ"))
        .anyMatch(p -> p.startsWith("TOPIC_DECISIONS_RETENTION_MS='soon'"));
  }

  @Test
  void aDecisionReadsBackAsWritten() {
    Decision d =
        new Decision(
            "req-1",
            "run-1",
            "sume.webhooks",
            3,
            17,
            0,
            null,
            Decision.Outcome.DEAD_LETTERED,
            "attempts",
            "apply_failed",
            "sume.webhooks.dlq",
            null,
            1_000);
    assertThat(Decision.parse(d.toBytes())).isEqualTo(d);
    assertThat(new String(d.toBytes(), java.nio.charset.StandardCharsets.UTF_8))
        .contains("\"outcome\":\"dead-lettered\"")
        .doesNotContain("replay")
        .doesNotContain("received_at");
  }
}
