package dev.runlane.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.EnvReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KafkaClientSettingsTest {
  private static final String JAAS =
      "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\""
          + " password=\"hunter2\";";

  private static KafkaClientSettings load(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    KafkaClientSettings s = KafkaClientSettings.fromEnv(r);
    r.throwIfInvalid();
    return s;
  }

  @Test
  void mapsEachVariableToTheClientPropertyItNames() {
    KafkaClientSettings s =
        load(
            Map.of(
                "KAFKA_CLIENT_SECURITY_PROTOCOL", "SASL_SSL",
                "KAFKA_CLIENT_SASL_MECHANISM", "SCRAM-SHA-512",
                "KAFKA_CLIENT_SASL_JAAS_CONFIG", JAAS));

    assertThat(s.withBootstrap("b:9092"))
        .containsEntry("bootstrap.servers", "b:9092")
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
        .containsEntry("sasl.jaas.config", JAAS);
  }

  @Test
  void secretsNeverShowInToString() {
    KafkaClientSettings s =
        load(Map.of("KAFKA_CLIENT_SASL_JAAS_CONFIG", JAAS, "KAFKA_CLIENT_SSL_KEY_PASSWORD", "pw1"));

    assertThat(s.toString()).doesNotContain("hunter2", "pw1").contains("sasl.jaas.config=***");
  }

  @Test
  void readsAPropertiesFileWhichTheVariablesOverride(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("client.properties");
    Files.writeString(file, "security.protocol=SSL\nclient.rack=eu-1\n");

    KafkaClientSettings s =
        load(
            Map.of(
                "KAFKA_CLIENT_PROPERTIES_FILE",
                file.toString(),
                "KAFKA_CLIENT_SECURITY_PROTOCOL",
                "SASL_SSL"));

    assertThat(s.forClients())
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("client.rack", "eu-1");
  }

  @Test
  void namesEveryBadVariableAndNeverEchoesASecret() {
    assertThatThrownBy(
            () ->
                load(
                    Map.of(
                        "KAFKA_CLIENT_SECURITY_PROTOCOL", "SASL_TLS",
                        "KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATON", "/x",
                        "KAFKA_CLIENT_ACKS", "1",
                        "KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATION", "/no/such/file.p12",
                        "KAFKA_CLIENT_PROPERTIES_FILE", "/no/such/client.properties")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("KAFKA_CLIENT_SECURITY_PROTOCOL")
        .hasMessageContaining("SASL_TLS")
        .hasMessageContaining(
            "KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATON: ssl.truststore.locaton is not a Kafka client"
                + " setting")
        .hasMessageContaining("KAFKA_CLIENT_ACKS: acks is set by runlane itself")
        .hasMessageContaining("'/no/such/file.p12' is not a readable file")
        .hasMessageContaining("KAFKA_CLIENT_PROPERTIES_FILE='/no/such/client.properties'");
  }

  @Test
  void explainsRefusedCredentialsByTheVariablesToCheck() {
    assertThat(
            KafkaClientSettings.explain(
                new RuntimeException(new SaslAuthenticationException("bad password"))))
        .contains("refused the client's credentials", "KAFKA_CLIENT_SASL_JAAS_CONFIG");
    assertThat(KafkaClientSettings.explain(new SslAuthenticationException("no trust")))
        .contains("TLS handshake", "KAFKA_CLIENT_SSL_");
    assertThat(KafkaClientSettings.explain(new IllegalStateException("other"))).isNull();
  }
}
