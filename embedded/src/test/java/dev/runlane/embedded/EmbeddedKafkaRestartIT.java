package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** An owned broker, next to the shared one: acked records survive a stop and a restart. */
@RealInfra
class EmbeddedKafkaRestartIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void ackedRecordsSurviveARestartOnTheSamePort(Infra shared) throws Exception {
    String topic = "restart";
    TopicPartition partition = new TopicPartition(topic, 0);
    String bootstrap;
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      bootstrap = kafka.bootstrapServers();
      assertThat(bootstrap).isNotEqualTo(shared.bootstrapServers());
      createTopic(bootstrap, topic);

      Map<String, Object> impatient =
          Map.of(
              ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000,
              ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2000,
              ProducerConfig.MAX_BLOCK_MS_CONFIG, 2000);
      try (KafkaProducer<String, String> producer =
          KafkaTestClients.producer(bootstrap, impatient)) {
        RecordMetadata acked =
            producer
                .send(new ProducerRecord<>(topic, "run-1", "before-stop"))
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(acked.offset()).isZero();

        kafka.stop();

        assertThat(kafka.isRunning()).isFalse();
        assertThatThrownBy(
                () ->
                    producer
                        .send(new ProducerRecord<>(topic, "run-1", "while-stopped"))
                        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
      }

      kafka.restart();

      assertThat(kafka.isRunning()).isTrue();
      assertThat(kafka.bootstrapServers()).isEqualTo(bootstrap);
      try (KafkaProducer<String, String> producer =
          KafkaTestClients.producer(bootstrap, Map.of())) {
        producer
            .send(new ProducerRecord<>(topic, "run-1", "after-restart"))
            .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      }
      try (KafkaConsumer<String, String> consumer =
          KafkaTestClients.consumer(bootstrap, "read_committed")) {
        assertThat(KafkaTestClients.readToEnd(consumer, List.of(partition), TIMEOUT))
            .extracting(ConsumerRecord::value)
            .containsExactly("before-stop", "after-restart");
      }
    }

    // Closing one broker leaves the other one in this JVM serving.
    createTopic(shared.bootstrapServers(), shared.uniqueName("after-owned-close"));
  }

  @Test
  void closeIsIdempotentAndDeletesTheData() {
    EmbeddedKafka kafka = EmbeddedKafka.start();
    assertThat(kafka.logDir()).isDirectory();

    kafka.close();
    kafka.close();

    assertThat(kafka.isRunning()).isFalse();
    assertThat(kafka.logDir()).doesNotExist();
    assertThatThrownBy(kafka::restart).isInstanceOf(IllegalStateException.class);
  }

  private static void createTopic(String bootstrap, String topic) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin
          .createTopics(List.of(new NewTopic(topic, 1, (short) 1)))
          .all()
          .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
  }
}
