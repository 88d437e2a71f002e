package dev.runlane.ingress.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The ingress's producer writing the moment {@link TopicEnsurer} returned, as the services do at
 * start. Before the ensurer waited for every new partition to be served, an idempotent producer's
 * first batch could be refused (not leader yet) while a later one was accepted; the first then
 * failed OUT_OF_ORDER_SEQUENCE until its delivery timeout (KAFKA-15591, D10). Without that wait, a
 * loop of this shape hit it in 5 of 6 rounds.
 */
@RealInfra
class FreshTopicProduceIT {

  private static final int RECORDS = 2000;

  @Test
  void everyRecordSentRightAfterTheTopicIsCreatedIsAcked(Infra infra) {
    byte[] body = new byte[1024];
    new SplittableRandom(7).nextBytes(body);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
      for (int round = 0; round < 4; round++) {
        String topic = infra.uniqueName("fresh-topic");
        TopicEnsurer.ensure(
            admin,
            List.of(TopicEnsurer.plain(topic, new TopicSettings(12, (short) -1))),
            Duration.ofSeconds(30));
        AtomicInteger acked = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicReference<Exception> firstError = new AtomicReference<>();
        Map<String, Object> config =
            ProducerSettings.producerConfig(
                infra.bootstrapServers(),
                Duration.ofSeconds(8), // the default ack deadline: a stuck batch expires in 7.2 s
                Duration.ofSeconds(10),
                Duration.ofMillis(1),
                Compression.LZ4,
                64 * 1024,
                "fresh-topic-" + round);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
          for (int i = 0; i < RECORDS; i++) {
            producer.send(
                new ProducerRecord<>(topic, ("run-" + i).getBytes(StandardCharsets.UTF_8), body),
                (metadata, error) -> {
                  if (error == null) {
                    acked.incrementAndGet();
                  } else {
                    failed.incrementAndGet();
                    firstError.compareAndSet(null, error);
                  }
                });
          }
          await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() + failed.get() == RECORDS);
        }
        assertThat(failed.get())
            .as("round %d: records failed, the first with %s", round, firstError.get())
            .isZero();
      }
    }
  }
}
