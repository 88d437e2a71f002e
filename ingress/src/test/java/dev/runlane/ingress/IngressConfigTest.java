package dev.runlane.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.kafka.Compression;
import dev.runlane.ingress.publish.ProducerSettings;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IngressConfigTest {

  private static final String SECRETS = "s3cr3t-newest-abcdef,s3cr3t-older-uvwxyz";

  @Test
  void defaultsFollowTheDesign() {
    IngressConfig c = IngressConfig.fromEnv(Map.of("SUME_SIGNING_SECRETS", SECRETS));

    assertThat(c.bootstrapServers()).isEqualTo("localhost:9092");
    assertThat(c.sumeSecrets()).hasSize(2);
    assertThat(c.standardWebhooksSecrets()).isEmpty();
    assertThat(c.timestampTolerance()).isEqualTo(Duration.ofSeconds(300));
    assertThat(c.port()).isEqualTo(8080);
    assertThat(c.adminPort()).isEqualTo(9080);
    assertThat(c.maxBodyBytes()).isEqualTo(1024 * 1024);
    assertThat(c.ackTimeout()).isEqualTo(Duration.ofMillis(8000));
    assertThat(c.producerLinger()).isEqualTo(Duration.ofMillis(2));
    assertThat(c.topics().webhooks()).isEqualTo("sume.webhooks");
    assertThat(c.topics().dlq()).isEqualTo("sume.webhooks.dlq");
    assertThat(c.topicSettings().partitions()).isEqualTo(12);
  }

  @Test
  void reportsEveryProblemAtOnce() {
    Map<String, String> env =
        Map.of(
            "INGRESS_PORT", "abc",
            "INGRESS_MAX_BODY_BYTES", "-1",
            "SUME_TIMESTAMP_TOLERANCE_SECONDS", "soon",
            "TOPIC_PARTITIONS", "0");

    assertThatThrownBy(() -> IngressConfig.fromEnv(env))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).hasSize(5))
        .hasMessageContaining("SUME_SIGNING_SECRETS is missing")
        .hasMessageContaining("INGRESS_PORT='abc' is not a port")
        .hasMessageContaining("INGRESS_MAX_BODY_BYTES")
        .hasMessageContaining("SUME_TIMESTAMP_TOLERANCE_SECONDS")
        .hasMessageContaining("TOPIC_PARTITIONS");
  }

  @ParameterizedTest
  @ValueSource(strings = {"10000", "499", "0", "-1", "8s"})
  void ackTimeoutMustStayBelowSumesTenSeconds(String value) {
    assertThatThrownBy(
            () ->
                IngressConfig.fromEnv(
                    Map.of("SUME_SIGNING_SECRETS", SECRETS, "INGRESS_ACK_TIMEOUT_MS", value)))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).hasSize(1))
        .hasMessageContaining("INGRESS_ACK_TIMEOUT_MS='" + value + "'")
        .hasMessageContaining("(500-9999)");
  }

  @ParameterizedTest
  @ValueSource(longs = {500, 9999})
  void ackTimeoutAcceptsTheEndsOfItsRange(long millis) {
    assertThat(
            IngressConfig.fromEnv(
                    Map.of(
                        "SUME_SIGNING_SECRETS",
                        SECRETS,
                        "INGRESS_ACK_TIMEOUT_MS",
                        Long.toString(millis)))
                .ackTimeout())
        .isEqualTo(Duration.ofMillis(millis))
        .isLessThan(IngressConfig.SUME_ATTEMPT_TIMEOUT);
  }

  @Test
  void lingerIsBoundedSoTheProducerStillFitsTheAckDeadline() {
    assertThatThrownBy(
            () ->
                IngressConfig.fromEnv(
                    Map.of("SUME_SIGNING_SECRETS", SECRETS, "INGRESS_PRODUCER_LINGER_MS", "101")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("INGRESS_PRODUCER_LINGER_MS='101'");
    IngressConfig c =
        IngressConfig.fromEnv(
            Map.of(
                "SUME_SIGNING_SECRETS",
                SECRETS,
                "INGRESS_PRODUCER_LINGER_MS",
                "100",
                "INGRESS_ACK_TIMEOUT_MS",
                "500"));
    // The shortest deadline with the longest linger passes ProducerSettings' own check (delivery
    // timeout > linger + 1, which KafkaProducer would otherwise refuse at construction) and
    // Kafka's config parsing.
    new ProducerConfig(
        ProducerSettings.producerConfig(
            c.bootstrapServers(),
            c.ackTimeout(),
            c.producerMaxBlock(),
            c.producerLinger(),
            c.producerCompression(),
            c.maxBodyBytes(),
            "t"));
  }

  @Test
  void compressionIsLz4UnlessSetAndAnUnknownTypeIsRefused() {
    assertThat(IngressConfig.fromEnv(Map.of("SUME_SIGNING_SECRETS", SECRETS)).producerCompression())
        .isEqualTo(Compression.LZ4);
    IngressConfig zstd =
        IngressConfig.fromEnv(
            Map.of("SUME_SIGNING_SECRETS", SECRETS, "INGRESS_PRODUCER_COMPRESSION", "ZSTD"));
    assertThat(
            ProducerSettings.producerConfig(
                zstd.bootstrapServers(),
                zstd.ackTimeout(),
                zstd.producerMaxBlock(),
                zstd.producerLinger(),
                zstd.producerCompression(),
                zstd.maxBodyBytes(),
                "t"))
        .containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    assertThatThrownBy(
            () ->
                IngressConfig.fromEnv(
                    Map.of(
                        "SUME_SIGNING_SECRETS", SECRETS, "INGRESS_PRODUCER_COMPRESSION", "brotli")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "INGRESS_PRODUCER_COMPRESSION='brotli' is not one of: none, gzip,"
                + " snappy, lz4, zstd");
  }

  @Test
  void portsMustDiffer() {
    assertThatThrownBy(
            () ->
                IngressConfig.fromEnv(
                    Map.of(
                        "SUME_SIGNING_SECRETS", SECRETS,
                        "INGRESS_PORT", "9000",
                        "INGRESS_ADMIN_PORT", "9000")))
        .hasMessageContaining("INGRESS_PORT and INGRESS_ADMIN_PORT must differ");
  }

  @Test
  void badStandardWebhooksSecretIsNamedWithoutItsValue() {
    assertThatThrownBy(
            () ->
                IngressConfig.fromEnv(
                    Map.of(
                        "SUME_SIGNING_SECRETS",
                        SECRETS,
                        "STANDARD_WEBHOOKS_SECRETS",
                        "whsec_not*base64!")))
        .hasMessageContaining("STANDARD_WEBHOOKS_SECRETS")
        .hasMessageNotContaining("not*base64");
  }

  @Test
  void toStringNeverShowsASecret() {
    IngressConfig c =
        IngressConfig.fromEnv(
            Map.of(
                "SUME_SIGNING_SECRETS",
                SECRETS,
                "STANDARD_WEBHOOKS_SECRETS",
                "whsec_c3RhbmRhcmQta2V5LTAxMjM="));

    assertThat(c.toString())
        .doesNotContain("s3cr3t")
        .doesNotContain("c3RhbmRhcmQta2V5LTAxMjM")
        .contains("***");
    assertThat(c.withPorts(0, 0).toString()).doesNotContain("s3cr3t");
  }

  @Test
  void testsMayAskForFreePorts() {
    IngressConfig c =
        IngressConfig.fromEnv(Map.of("SUME_SIGNING_SECRETS", SECRETS)).withPorts(0, 0);
    assertThat(c.port()).isZero();
    assertThat(c.adminPort()).isZero();
  }
}
