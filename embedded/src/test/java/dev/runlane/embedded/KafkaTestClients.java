package dev.runlane.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Small client factories and a read-to-end helper shared by the ITs of this module. */
final class KafkaTestClients {
  private KafkaTestClients() {}

  static KafkaProducer<String, String> producer(
      String bootstrapServers, Map<String, Object> overrides) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    config.putAll(overrides);
    return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
  }

  static KafkaConsumer<String, String> consumer(String bootstrapServers, String isolationLevel) {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
  }

  /**
   * Reads the partitions from the beginning until the consumer's position reaches the end offsets
   * (the last stable offsets under read_committed) taken at the start; fails after {@code timeout}.
   */
  static List<ConsumerRecord<String, String>> readToEnd(
      KafkaConsumer<String, String> consumer,
      Collection<TopicPartition> partitions,
      Duration timeout) {
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!reached(consumer, end)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "did not reach end offsets " + end + " within " + timeout + "; read " + records);
      }
      consumer.poll(Duration.ofMillis(200)).forEach(records::add);
    }
    return records;
  }

  private static boolean reached(
      KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> end) {
    return end.entrySet().stream()
        .allMatch(e -> consumer.position(e.getKey(), Duration.ofSeconds(10)) >= e.getValue());
  }
}
