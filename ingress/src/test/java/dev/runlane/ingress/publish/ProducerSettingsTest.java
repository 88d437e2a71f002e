package dev.runlane.ingress.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.TopicEnsurer;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProducerSettingsTest {

  @ParameterizedTest
  @ValueSource(longs = {500, 2000, 8000, 9999})
  void producerGivesUpBeforeTheAckDeadline(long ackMillis) {
    Map<String, Object> c =
        ProducerSettings.producerConfig(
            "localhost:9092",
            Duration.ofMillis(ackMillis),
            Duration.ofMillis(20),
            Duration.ofMillis(5),
            Compression.LZ4,
            1 << 20,
            "t");

    int delivery = (int) c.get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
    int request = (int) c.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG);
    int linger = (int) c.get(ProducerConfig.LINGER_MS_CONFIG);
    assertThat((long) delivery).isLessThan(ackMillis);
    assertThat(request + linger).isLessThanOrEqualTo(delivery);
  }

  @ParameterizedTest
  @ValueSource(ints = {1024, 1 << 20, 4 << 20})
  void durableIdempotentAndNonBlocking(int maxBody) {
    Map<String, Object> c =
        ProducerSettings.producerConfig(
            "localhost:9092",
            Duration.ofSeconds(8),
            Duration.ofMillis(20),
            Duration.ofMillis(1),
            Compression.LZ4,
            maxBody,
            "t");

    assertThat(c)
        .containsEntry(ProducerConfig.ACKS_CONFIG, "all")
        .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
        .containsEntry(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5)
        .containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")
        .containsEntry(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20L)
        .containsEntry(ProducerConfig.LINGER_MS_CONFIG, 1)
        // The kernel sizes the socket's buffers: a fixed size turns its autotuning off (D34).
        .containsEntry(ProducerConfig.RECEIVE_BUFFER_CONFIG, -1)
        .containsEntry(ProducerConfig.SEND_BUFFER_CONFIG, -1);
    assertThat((int) c.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG))
        .isGreaterThan(maxBody)
        .isEqualTo(TopicEnsurer.maxMessageBytes(maxBody));
    // Kafka's own validation accepts the combination.
    new ProducerConfig(c);
  }
}
