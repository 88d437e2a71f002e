package dev.runlane.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SecretTest {

  /** The shape of a service config: a record holding secrets. */
  private record SampleConfig(int port, Secret signingSecret, List<Secret> rotation) {}

  @Test
  void toStringNeverShowsTheValue() {
    Secret s = Secret.of("hunter2-very-secret");

    assertThat(s).hasToString("***");
    assertThat(s.reveal()).isEqualTo("hunter2-very-secret");
    assertThat(s.utf8()).isEqualTo("hunter2-very-secret".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void configRecordToStringNeverShowsTheValue() {
    SampleConfig config =
        new SampleConfig(
            8080, Secret.of("hunter2-very-secret"), List.of(Secret.of("older-secret")));

    assertThat(config.toString())
        .doesNotContain("hunter2-very-secret")
        .doesNotContain("older-secret")
        .contains("***");
  }

  @Test
  void configFromEnvToStringNeverShowsTheValue() {
    EnvReader env = new EnvReader(java.util.Map.of("SECRETS", "alpha-secret, beta-secret"));
    List<Secret> secrets = env.secrets("SECRETS");

    assertThat(secrets).extracting(Secret::reveal).containsExactly("alpha-secret", "beta-secret");
    assertThat(secrets.toString()).doesNotContain("alpha").doesNotContain("beta");
  }

  @Test
  void equalsByValue() {
    assertThat(Secret.of("a")).isEqualTo(Secret.of("a")).hasSameHashCodeAs(Secret.of("a"));
    assertThat(Secret.of("a")).isNotEqualTo(Secret.of("b"));
  }

  @Test
  void rejectsNullAndBlank() {
    assertThatThrownBy(() -> Secret.of(null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Secret.of("  ")).isInstanceOf(IllegalArgumentException.class);
  }
}
