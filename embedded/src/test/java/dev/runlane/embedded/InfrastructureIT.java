package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

@RealInfra
class InfrastructureIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void kafkaTransactionsAreReadCommitted(Infra infra) throws Exception {
    String topic = infra.uniqueName("it.tx");
    createTopic(infra, topic, 3);
    List<TopicPartition> partitions =
        IntStream.range(0, 3).mapToObj(p -> new TopicPartition(topic, p)).toList();

    try (KafkaProducer<String, String> producer =
        KafkaTestClients.producer(
            infra.bootstrapServers(),
            Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, infra.uniqueName("it-tx")))) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int p = 0; p < 3; p++) {
        producer.send(new ProducerRecord<>(topic, p, "run-" + p, "committed-" + p));
      }
      producer.commitTransaction();

      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, 0, "run-0", "aborted"));
      producer.flush();
      producer.abortTransaction();

      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, 0, "run-0", "after-abort"));
      producer.commitTransaction();
    }

    try (KafkaConsumer<String, String> committed =
        KafkaTestClients.consumer(infra.bootstrapServers(), "read_committed")) {
      List<ConsumerRecord<String, String>> records =
          KafkaTestClients.readToEnd(committed, partitions, TIMEOUT);
      assertThat(records)
          .extracting(ConsumerRecord::value)
          .containsExactlyInAnyOrder("committed-0", "committed-1", "committed-2", "after-abort");
      assertThat(records.stream().filter(r -> r.partition() == 0).map(ConsumerRecord::value))
          .containsExactly("committed-0", "after-abort");
    }
    // The aborted record was written: an uncommitted reader sees it, a committed one did not.
    try (KafkaConsumer<String, String> uncommitted =
        KafkaTestClients.consumer(infra.bootstrapServers(), "read_uncommitted")) {
      assertThat(KafkaTestClients.readToEnd(uncommitted, partitions.subList(0, 1), TIMEOUT))
          .extracting(ConsumerRecord::value)
          .containsExactly("committed-0", "aborted", "after-abort");
    }
  }

  @Test
  void redisSetNxClaimsOnce(Infra infra) {
    String key = infra.uniqueName("runlane:it:") + ":claim";
    try (RedisClient redis = RedisClient.create(infra.redisUri())) {
      SetParams claim = SetParams.setParams().nx().ex(10);
      assertThat(redis.set(key, "processing:a", claim)).isEqualTo("OK");
      assertThat(redis.set(key, "processing:b", claim)).isNull();
      assertThat(redis.get(key)).isEqualTo("processing:a");
      assertThat(redis.ttl(key)).isBetween(1L, 10L);
      redis.del(key);
    }
  }

  @Test
  void uniqueNamesDiffer(Infra infra) {
    assertThat(infra.uniqueName("t")).startsWith("t-").isNotEqualTo(infra.uniqueName("t"));
    assertThat(infra.kafkaKind()).isIn("testcontainers", "embedded");
  }

  private static void createTopic(Infra infra, String topic, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
          .all()
          .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      TopicDescription description =
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)
              .get(topic);
      assertThat(description.partitions()).hasSize(partitions);
    }
  }
}
