package dev.runlane.ingress.publish;

import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.SocketBuffers;
import dev.runlane.common.kafka.TopicEnsurer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The producer settings of the ingress, derived from the ack deadline so that the producer gives up
 * on a record before the HTTP handler answers 503.
 *
 * <ul>
 *   <li>{@code acks=all}, {@code enable.idempotence=true}, {@code max.in.flight=5}: durable, no
 *       duplicates from producer retries, order kept per partition;
 *   <li>{@code delivery.timeout.ms} = 90% of the ack deadline, {@code request.timeout.ms} =
 *       delivery timeout - linger (Kafka requires request timeout + linger &lt;= delivery timeout);
 *   <li>{@code max.block.ms} small: {@code send()} runs on an event loop and must not wait for
 *       buffer space; metadata is fetched before the server accepts requests and kept ({@code
 *       metadata.max.idle.ms} one day), so {@code send()} never waits for it either;
 *   <li>{@code lz4}, {@code linger.ms} from {@code INGRESS_PRODUCER_LINGER_MS}: small batches,
 *       cheap compression;
 *   <li>{@code max.request.size} = {@link TopicEnsurer#maxMessageBytes(int)}, the rule the topics
 *       are created with.
 * </ul>
 */
public final class ProducerSettings {

  private ProducerSettings() {}

  /** The delivery timeout for an ack deadline: 90% of it. */
  public static Duration deliveryTimeout(Duration ackTimeout) {
    return Duration.ofMillis(ackTimeout.toMillis() * 9 / 10);
  }

  /**
   * @param bootstrapServers the brokers
   * @param ackTimeout the HTTP ack deadline
   * @param maxBlock the longest {@code send()} may block (buffer full)
   * @param linger how long a record waits for others to share its batch
   * @param compression the compression type
   * @param maxBodyBytes the largest body accepted
   * @param clientId the client id (metrics, broker logs)
   */
  public static Map<String, Object> producerConfig(
      String bootstrapServers,
      Duration ackTimeout,
      Duration maxBlock,
      Duration linger,
      Compression compression,
      int maxBodyBytes,
      String clientId) {
    int delivery = (int) deliveryTimeout(ackTimeout).toMillis();
    int lingerMs = (int) linger.toMillis();
    if (delivery <= lingerMs + 1) {
      throw new IllegalArgumentException("ack timeout too short: " + ackTimeout);
    }
    Map<String, Object> c = new HashMap<>();
    c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    c.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
    c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    c.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
    c.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression.kafkaName());
    c.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
    c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, delivery);
    c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, delivery - lingerMs);
    c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlock.toMillis());
    c.put(ProducerConfig.METADATA_MAX_IDLE_CONFIG, Duration.ofDays(1).toMillis());
    c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, TopicEnsurer.maxMessageBytes(maxBodyBytes));
    c.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
    // Let the kernel size the socket buffers: a fixed size turns its autotuning off, and the
    // clients' fixed buffers dropped segments that TCP resent only ~200 ms later (D34).
    c.putAll(SocketBuffers.OS_DEFAULTS);
    return c;
  }
}
