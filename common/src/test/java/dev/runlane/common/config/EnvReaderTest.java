package dev.runlane.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EnvReaderTest {

  private enum Mode {
    FAST,
    SAFE_MODE
  }

  @Test
  void readsDurationsWrittenWithTheirUnit() {
    Duration max = Duration.ofMinutes(1);
    EnvReader env =
        new EnvReader(Map.of("A", "500ms", "B", "2s", "C", "1m", "D", "0", "E", "5", "F", "2m"));
    assertThat(env.duration("A", Duration.ZERO, Duration.ZERO, max))
        .isEqualTo(Duration.ofMillis(500));
    assertThat(env.duration("B", Duration.ZERO, Duration.ZERO, max))
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(env.duration("C", Duration.ZERO, Duration.ZERO, max))
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(env.duration("D", Duration.ofSeconds(3), Duration.ZERO, max)).isZero();
    assertThat(env.duration("UNSET", Duration.ofSeconds(3), Duration.ZERO, max))
        .isEqualTo(Duration.ofSeconds(3));
    assertThat(env.problems()).isEmpty();
    env.duration("E", Duration.ZERO, Duration.ZERO, max);
    env.duration("F", Duration.ZERO, Duration.ZERO, max);
    assertThat(env.problems())
        .containsExactly(
            "E='5' is not a duration between 0ms and 60000ms (write it with its unit: 500ms, 2s,"
                + " 1m; or 0)",
            "F='2m' is not a duration between 0ms and 60000ms (write it with its unit: 500ms, 2s,"
                + " 1m; or 0)");
  }

  @Test
  void readsTypedValues() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "PORT", " 8081 ",
                "COUNT", "7",
                "BIG", "5000000000",
                "TTL", "60",
                "WAIT", "250",
                "FLAG", "TRUE",
                "MODE", "safe-mode",
                "REDIS_URL", "redis://:pw@redis:6379/0",
                "LIST", "a, b,,c ",
                "NAME", "  x  "));

    assertThat(env.port("PORT", 1)).isEqualTo(8081);
    assertThat(env.integer("COUNT", 1, 1, 10)).isEqualTo(7);
    assertThat(env.longValue("BIG", 1, 1, Long.MAX_VALUE)).isEqualTo(5_000_000_000L);
    assertThat(env.seconds("TTL", 1, 1, 3600)).isEqualTo(Duration.ofSeconds(60));
    assertThat(env.millis("WAIT", 1, 1, 1000)).isEqualTo(Duration.ofMillis(250));
    assertThat(env.bool("FLAG", false)).isTrue();
    assertThat(env.enumValue("MODE", Mode.class, Mode.FAST)).isEqualTo(Mode.SAFE_MODE);
    assertThat(env.uri("REDIS_URL", "redis://localhost:6379", Set.of("redis", "rediss")))
        .isEqualTo(URI.create("redis://:pw@redis:6379/0"));
    assertThat(env.list("LIST", List.of())).containsExactly("a", "b", "c");
    assertThat(env.string("NAME", "d")).isEqualTo("x");
    assertThat(env.problems()).isEmpty();
  }

  @Test
  void blankCountsAsUnset() {
    EnvReader env = new EnvReader(Map.of("PORT", "  ", "NAME", "", "SECRETS", " "));

    assertThat(env.port("PORT", 8080)).isEqualTo(8080);
    assertThat(env.string("NAME", "def")).isEqualTo("def");
    assertThat(env.isSet("NAME")).isFalse();
    env.secrets("SECRETS");
    assertThat(env.problems()).containsExactly("SECRETS is missing");
  }

  @Test
  void collectsEveryProblemIntoOneMessage() {
    EnvReader env =
        new EnvReader(
            Map.of(
                "INGRESS_PORT", "abc",
                "SUME_TIMESTAMP_TOLERANCE_SECONDS", "-5",
                "FLAG", "maybe",
                "MODE", "turbo",
                "REDIS_URL", "http://:topsecretpw@redis:6379"));

    assertThat(env.port("INGRESS_PORT", 8080)).isEqualTo(8080);
    assertThat(env.secrets("SUME_SIGNING_SECRETS")).isEmpty();
    assertThat(env.seconds("SUME_TIMESTAMP_TOLERANCE_SECONDS", 300, 0, 86_400))
        .isEqualTo(Duration.ofSeconds(300));
    assertThat(env.bool("FLAG", true)).isTrue();
    assertThat(env.enumValue("MODE", Mode.class, Mode.FAST)).isEqualTo(Mode.FAST);
    assertThat(env.uri("REDIS_URL", "redis://localhost:6379", Set.of("redis")))
        .isEqualTo(URI.create("redis://localhost:6379"));
    env.problem("KAFKA_BOOTSTRAP_SERVERS and INGRESS_PORT conflict");

    ConfigException e = catchThrowableOfType(ConfigException.class, env::throwIfInvalid);

    assertThat(e.problems())
        .containsExactly(
            "INGRESS_PORT='abc' is not a port (1-65535)",
            "SUME_SIGNING_SECRETS is missing",
            "SUME_TIMESTAMP_TOLERANCE_SECONDS='-5' is not a number of seconds (0-86400)",
            "FLAG='maybe' is not a boolean (true or false)",
            "MODE='turbo' is not one of: fast, safe_mode",
            "REDIS_URL='http://***@redis:6379' has scheme 'http', expected one of: redis",
            "KAFKA_BOOTSTRAP_SERVERS and INGRESS_PORT conflict");
    assertThat(e.getMessage())
        .startsWith("invalid configuration: INGRESS_PORT='abc' is not a port (1-65535); ")
        .contains("SUME_SIGNING_SECRETS is missing")
        .doesNotContain("topsecretpw");
  }

  @Test
  void neverEchoesSecrets() {
    EnvReader env = new EnvReader(Map.of("SUME_SIGNING_SECRETS", "s3cr3t-one,,s3cr3t-two"));

    assertThat(env.secrets("SUME_SIGNING_SECRETS")).isEmpty();

    assertThatThrownBy(env::throwIfInvalid)
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("SUME_SIGNING_SECRETS has an empty entry at position 2")
        .hasMessageNotContaining("s3cr3t");
  }

  @Test
  void reportsOutOfRangeAndNonNumbers() {
    EnvReader env =
        new EnvReader(Map.of("A", "0", "B", "x", "C", "70000", "D", "99999999999999999999"));

    env.integer("A", 12, 1, 10_000);
    env.longValue("B", 1, 0, 10);
    env.port("C", 1);
    env.integer("D", 1, 1, 10);

    assertThat(env.problems())
        .containsExactly(
            "A='0' is out of range (1-10000)",
            "B='x' is not an integer",
            "C='70000' is not a port (1-65535)",
            "D='99999999999999999999' is not an integer");
  }

  @Test
  void cutsLongValuesInMessages() {
    EnvReader env = new EnvReader(Map.of("P", "9".repeat(500)));

    env.port("P", 1);

    assertThat(env.problems().get(0)).hasSizeLessThan(150);
  }

  @Test
  void uriNeedsSchemeAndHost() {
    EnvReader env = new EnvReader(Map.of("A", "localhost:6379", "B", "redis://", "C", "::bad uri"));

    env.uri("A", "redis://localhost:6379", Set.of("redis"));
    env.uri("B", "redis://localhost:6379", Set.of("redis"));
    env.uri("C", "redis://localhost:6379", Set.of());

    assertThat(env.problems()).hasSize(3).allSatisfy(p -> assertThat(p).matches("[ABC]=.*"));
  }

  @Test
  void collectsWarningsApartFromProblems() {
    EnvReader env = new EnvReader(Map.of());

    env.warn("DONE_TTL_SECONDS=3600 is shorter than Sume's retry horizon");

    assertThat(env.warnings())
        .containsExactly("DONE_TTL_SECONDS=3600 is shorter than Sume's retry horizon");
    env.throwIfInvalid();
  }

  @Test
  void requiredReportsMissing() {
    EnvReader env = new EnvReader(Map.of("PRESENT", "v"));

    assertThat(env.required("PRESENT")).isEqualTo("v");
    assertThat(env.required("ABSENT")).isEmpty();
    assertThat(env.problems()).containsExactly("ABSENT is missing");
  }
}
