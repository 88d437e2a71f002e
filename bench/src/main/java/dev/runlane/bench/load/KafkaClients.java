package dev.runlane.bench.load;

import dev.runlane.common.kafka.SocketBuffers;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.ProducerConfig;

/** The settings of the bench's own Kafka clients: its loads' producers and its readers. */
public final class KafkaClients {
  private KafkaClients() {}

  /**
   * The settings of the bench's readers: they see only committed output, as a consumer of the
   * pipeline would, commit no offsets, and size their sockets as the services' clients do (D34). A
   * new map, for the caller to add to.
   */
  public static Map<String, Object> readCommitted(String bootstrap) {
    Map<String, Object> c = new HashMap<>(SocketBuffers.OS_DEFAULTS);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    return c;
  }

  /** A producer for a steady live load: idempotent, acks=all, a short linger. */
  public static Map<String, Object> live(String bootstrap) {
    return Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrap,
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
        true,
        ProducerConfig.ACKS_CONFIG,
        "all",
        ProducerConfig.LINGER_MS_CONFIG,
        5,
        ProducerConfig.COMPRESSION_TYPE_CONFIG,
        "lz4",
        ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
        30_000,
        ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
        20_000);
  }

  /**
   * A producer for a bulk pre-fill: large batches, acks=all, not idempotent but one request in
   * flight (an idempotent bulk fill on this broker saw OutOfOrderSequence rejections under load;
   * one request in flight keeps order without sequences).
   */
  public static Map<String, Object> fill(String bootstrap) {
    return Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrap,
        ProducerConfig.LINGER_MS_CONFIG,
        20,
        ProducerConfig.BATCH_SIZE_CONFIG,
        64 * 1024,
        ProducerConfig.COMPRESSION_TYPE_CONFIG,
        "lz4",
        ProducerConfig.ACKS_CONFIG,
        "all",
        ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
        false,
        ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
        1);
  }

  /** Records {@code id} as acked, or counts a send the broker never acknowledged. */
  public static Callback countAck(String id, Set<String> acked, AtomicLong notAcked) {
    return (metadata, e) -> {
      if (e == null) {
        acked.add(id);
      } else {
        notAcked.incrementAndGet();
      }
    };
  }
}
