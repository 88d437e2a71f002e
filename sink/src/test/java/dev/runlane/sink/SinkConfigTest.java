package dev.runlane.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SinkConfigTest {

  @Test
  void aMissingDatabaseUrlStopsTheStartNamingIt() {
    assertThatThrownBy(() -> SinkConfig.fromEnv(Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("SINK_DATABASE_URL is missing");
  }

  @Test
  void everyBadVariableIsNamedAtOnce() {
    assertThatThrownBy(
            () ->
                SinkConfig.fromEnv(
                    Map.of(
                        "SINK_DATABASE_URL", "postgresql://db/runlane",
                        "SINK_PORT", "abc",
                        "SINK_MAX_POLL_RECORDS", "0",
                        "SINK_GROUP_ID", "no spaces")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("SINK_DATABASE_URL must start with jdbc:postgresql://")
        .hasMessageContaining("SINK_PORT='abc'")
        .hasMessageContaining("SINK_MAX_POLL_RECORDS='0'")
        .hasMessageContaining("SINK_GROUP_ID");
  }

  @Test
  void aPasswordInTheUrlIsRefusedWithoutEchoingIt() {
    assertThatThrownBy(
            () ->
                SinkConfig.fromEnv(
                    Map.of("SINK_DATABASE_URL", "jdbc:postgresql://db/r?password=hunter2")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("SINK_DATABASE_PASSWORD")
        .hasMessageNotContaining("hunter2");
  }

  @Test
  void thePasswordNeverShowsInTheConfig() {
    SinkConfig config =
        SinkConfig.fromEnv(
            Map.of(
                "SINK_DATABASE_URL", "jdbc:postgresql://db:5432/runlane",
                "SINK_DATABASE_PASSWORD", "s3cret-pw"));
    assertThat(config.databasePassword()).isPresent();
    assertThat(config.databasePassword().get().reveal()).isEqualTo("s3cret-pw");
    assertThat(config.toString()).doesNotContain("s3cret-pw");
    assertThat(config.groupId()).isEqualTo("runlane-sink");
    assertThat(config.topic()).isEqualTo("sume.events");
    assertThat(config.port()).isEqualTo(9082);
  }

  @Test
  void theConsumerReadsCommittedOutputAndNeverAutoCommits() {
    SinkConfig config =
        SinkConfig.fromEnv(Map.of("SINK_DATABASE_URL", "jdbc:postgresql://db:5432/runlane"));
    Map<String, Object> p = SinkApp.consumerProperties(config);
    assertThat(p).containsEntry("isolation.level", "read_committed");
    assertThat(p).containsEntry("enable.auto.commit", false);
    assertThat(p).containsEntry("group.id", "runlane-sink");
  }
}
