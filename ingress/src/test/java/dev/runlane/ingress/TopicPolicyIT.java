package dev.runlane.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

/** Topics a service creates carry the operator's settings; weaker existing ones are named. */
@RealInfra
class TopicPolicyIT {

  @Test
  void createdTopicsCarryTheRetentionAndMinInsyncReplicasAsked(Infra infra) throws Exception {
    String name = infra.uniqueName("policy");
    Map<String, String> env = Fixtures.env(infra.bootstrapServers(), name);
    env.put("TOPIC_WEBHOOKS_RETENTION_MS", "-1");
    env.put("TOPIC_MIN_INSYNC_REPLICAS", "1");
    // Started for the topics it creates at start-up.
    IngressApp app = IngressApp.start(Fixtures.config(env), Metrics.newRegistry("ingress"));
    try (app;
        Admin admin = admin(infra)) {
      assertThat(config(admin, name + ".webhooks", TopicConfig.RETENTION_MS_CONFIG))
          .isEqualTo("-1");
      assertThat(config(admin, name + ".webhooks", TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG))
          .isEqualTo("1");
      // The DLQ keeps what it holds by default: those webhooks were answered 2xx (D37).
      assertThat(config(admin, name + ".webhooks.dlq", TopicConfig.RETENTION_MS_CONFIG))
          .isEqualTo("-1");
    }
  }

  @Test
  void anExistingTopicWithShorterRetentionIsNamedWithTheCommandThatFixesIt(Infra infra)
      throws Exception {
    String topic = infra.uniqueName("short") + ".webhooks";
    try (Admin admin = admin(infra)) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, Optional.of(1), Optional.empty())
                      .configs(Map.of(TopicConfig.RETENTION_MS_CONFIG, "3600000"))))
          .all()
          .get(30, TimeUnit.SECONDS);
      TopicPolicy policy =
          TopicPolicy.fromEnv(
              new dev.runlane.common.config.EnvReader(
                  Map.of("TOPIC_WEBHOOKS_RETENTION_MS", "604800000")));

      // A topic just created may not be on the broker yet (KRaft metadata propagates after the
      // controller answers): the check then says it could not look, which is not the case here.
      List<String> weaker =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () ->
                      policy.weaker(
                          admin,
                          Map.of(topic, TopicPolicy.Role.WEBHOOKS),
                          (short) -1,
                          "broker:9092"),
                  lines -> lines.stream().noneMatch(l -> l.startsWith("could not check")));

      assertThat(weaker)
          .singleElement()
          .asString()
          .contains(
              "topic " + topic + " has retention.ms=3600000",
              "TOPIC_WEBHOOKS_RETENTION_MS=604800000",
              "kafka-configs --bootstrap-server broker:9092 --alter --entity-type topics"
                  + " --entity-name "
                  + topic
                  + " --add-config retention.ms=604800000");
    }
  }

  private static Admin admin(Infra infra) {
    return Admin.create(
        Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()));
  }

  private static String config(Admin admin, String topic, String key) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    return admin
        .describeConfigs(List.of(r))
        .all()
        .get(30, TimeUnit.SECONDS)
        .get(r)
        .get(key)
        .value();
  }
}
