package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.config.Secret;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.ingress.IngressApp;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.local.Stack;
import dev.runlane.local.simulator.Ledger;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Both services against a broker that takes only SASL_SSL with SCRAM-SHA-512 on the listener they
 * are given, and a Redis that needs a password: configured by environment as an operator would
 * (KAFKA_CLIENT_*, REDIS_PASSWORD). Wrong credentials stop a service at start, naming the setting.
 */
class SecuredClusterIT {
  private static EmbeddedKafka kafka;
  private static EmbeddedRedis redis;
  private static final String REDIS_PASSWORD = "redis-" + Long.toHexString(System.nanoTime());

  @BeforeAll
  static void start() {
    kafka = EmbeddedKafka.startSecured();
    redis = EmbeddedRedis.startOwned(List.of("requirepass " + REDIS_PASSWORD));
  }

  @AfterAll
  static void stop() {
    if (redis != null) {
      redis.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  private static Map<String, String> env(String name, String kafkaPassword, String redisPassword)
      throws Exception {
    EmbeddedKafka.Secured s = kafka.secured();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", s.bootstrapServers());
    env.put("KAFKA_CLIENT_SECURITY_PROTOCOL", "SASL_SSL");
    env.put("KAFKA_CLIENT_SASL_MECHANISM", "SCRAM-SHA-512");
    env.put("KAFKA_CLIENT_SASL_JAAS_CONFIG", s.jaasConfig(kafkaPassword));
    env.put("KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATION", s.tls().trustStore().toString());
    env.put("KAFKA_CLIENT_SSL_TRUSTSTORE_PASSWORD", s.tls().password());
    env.put("KAFKA_CLIENT_SSL_TRUSTSTORE_TYPE", "PKCS12");
    env.put("REDIS_URL", redis.uri().toString());
    env.put("REDIS_PASSWORD", redisPassword);
    env.put("PROCESSOR_APPLICATION_ID", name + "-processor");
    env.put("PROCESSOR_STATE_DIR", Files.createTempDirectory("runlane-" + name).toString());
    env.put("TOPIC_WEBHOOKS", name + ".webhooks");
    env.put("TOPIC_DLQ", name + ".dlq");
    env.put("TOPIC_EVENTS", name + ".events");
    env.put("TOPIC_STALE", name + ".stale");
    env.put("TOPIC_RUNS", name + ".runs");
    env.put("TOPIC_CONTROL", name + ".control");
    env.put("TOPIC_PARTITIONS", "3");
    env.put("TOPIC_REPLICATION_FACTOR", "1");
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("KAFKA_STARTUP_TIMEOUT_SECONDS", "20");
    return env;
  }

  @Test
  void webhooksFlowEndToEndOverSaslSslWithScramAndAPasswordedRedis() throws Exception {
    EmbeddedKafka.Secured s = kafka.secured();
    Secret secret = Stack.newSecret();
    Map<String, String> env = env("secured", s.password(), REDIS_PASSWORD);
    env.put("SUME_SIGNING_SECRETS", secret.reveal());
    IngressConfig ingressConfig = IngressConfig.fromEnv(env).withPorts(0, 0);
    ProcessorConfig processorConfig = ProcessorConfig.fromEnv(env).withPort(0);
    assertThat(ingressConfig.toString() + processorConfig)
        .doesNotContain(s.password(), REDIS_PASSWORD, s.tls().password());
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    try (IngressApp ingress = IngressApp.start(ingressConfig, Metrics.newRegistry("ingress"));
        ProcessorApp processor =
            ProcessorApp.start(
                processorConfig,
                new RedisDedup(processorConfig.redisDedupSettings(), registry),
                registry,
                FaultHook.NONE);
        SumeSimulator simulator =
            new SumeSimulator(
                SumeSimulator.Settings.of(
                    URI.create("http://127.0.0.1:" + ingress.port() + "/webhooks/sume"),
                    secret,
                    1000,
                    20261207L))) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> processor.streams().state() == KafkaStreams.State.RUNNING);
      simulator.start(50, 200, Duration.ofSeconds(30));
      assertThat(simulator.awaitIdle(Duration.ofSeconds(60))).isTrue();
      Ledger ledger = simulator.ledger();
      Set<String> acked =
          ledger.snapshot().stream()
              .filter(Ledger.SentEvent::acked)
              .map(e -> e.event().requestId())
              .collect(Collectors.toSet());
      assertThat(acked).hasSize(200);

      // Read back over the secured listener: every acked event applied or stale, none twice.
      Map<String, Integer> applied = new HashMap<>();
      Set<String> stale = new HashSet<>();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                read(processorConfig, "secured.events")
                    .forEach(id -> applied.merge(id, 1, Integer::sum));
                stale.addAll(read(processorConfig, "secured.stale"));
                boolean all =
                    acked.stream().allMatch(id -> applied.containsKey(id) || stale.contains(id));
                if (!all) {
                  applied.clear();
                  stale.clear();
                }
                return all;
              });
      assertThat(applied.values()).allMatch(n -> n == 1);
      // Redis answered every round trip with the password: none was decided without it.
      assertThat(
              registry.find("runlane.processor.redis.latency").tag("op", "claim").timer().count())
          .as("Redis round trips")
          .isPositive();
      assertThat(registry.find("runlane.processor.degraded.decisions").counter().count())
          .as("decided without Redis")
          .isZero();
    }
  }

  @Test
  void wrongKafkaCredentialsStopEachServiceAtStartNamingTheSetting() throws Exception {
    Map<String, String> env = env("wrong-kafka", "not-the-password", REDIS_PASSWORD);
    env.put("SUME_SIGNING_SECRETS", "s3cret");
    ProcessorConfig processorConfig = ProcessorConfig.fromEnv(env).withPort(0);
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");

    assertThatThrownBy(
            () ->
                ProcessorApp.start(
                    processorConfig,
                    new RedisDedup(processorConfig.redisDedupSettings(), registry),
                    registry,
                    FaultHook.NONE))
        .satisfies(
            e ->
                assertThat(KafkaClientSettings.explain(e))
                    .contains("refused the client's credentials", "KAFKA_CLIENT_SASL_JAAS_CONFIG"));
    assertThatThrownBy(
            () ->
                IngressApp.start(
                    IngressConfig.fromEnv(env).withPorts(0, 0), Metrics.newRegistry("ingress")))
        .satisfies(
            e ->
                assertThat(KafkaClientSettings.explain(e))
                    .contains("refused the client's credentials", "KAFKA_CLIENT_SASL_JAAS_CONFIG"));
  }

  @Test
  void aWrongRedisPasswordStopsTheProcessorAtStartNamingTheSetting() throws Exception {
    Map<String, String> env = env("wrong-redis", kafka.secured().password(), "not-the-password");
    ProcessorConfig processorConfig = ProcessorConfig.fromEnv(env).withPort(0);
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");

    assertThatThrownBy(
            () ->
                ProcessorApp.start(
                    processorConfig,
                    new RedisDedup(processorConfig.redisDedupSettings(), registry),
                    registry,
                    FaultHook.NONE))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Redis refused the credentials")
        .hasMessageContaining("REDIS_PASSWORD")
        .hasMessageNotContaining("not-the-password");
  }

  /** Request ids of a topic's records, read over the secured listener (read_committed). */
  private static List<String> read(ProcessorConfig config, String topic) {
    Map<String, Object> c = config.kafkaClient().withBootstrap(config.bootstrapServers());
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(i -> new TopicPartition(topic, i.partition()))
              .toList();
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps);
      List<String> ids = new java.util.ArrayList<>();
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        consumer
            .poll(Duration.ofMillis(200))
            .forEach(
                r ->
                    ids.add(
                        new String(
                            r.headers().lastHeader(RecordHeaders.REQUEST_ID).value(),
                            StandardCharsets.UTF_8)));
      }
      return ids;
    }
  }
}
