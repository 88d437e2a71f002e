package dev.runlane.embedded;

import java.time.Duration;
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

/** Small client factories shared by the ITs of this module, and their read-to-end. */
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

  static List<ConsumerRecord<String, String>> readToEnd(
      KafkaConsumer<String, String> consumer,
      Collection<TopicPartition> partitions,
      Duration timeout) {
    return TopicReader.readToEnd(consumer, partitions, timeout);
  }
}
