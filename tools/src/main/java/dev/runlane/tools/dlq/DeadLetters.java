package dev.runlane.tools.dlq;

import dev.runlane.tools.BadUsage;
import dev.runlane.tools.kafka.Changelogs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reading a topic's records as {@code read_committed}: all of them, or one by coordinates. */
final class DeadLetters {
  private DeadLetters() {}

  /** Every record of {@code topic}, in offset order within each partition. */
  static void each(
      Map<String, Object> clientSettings,
      String topic,
      Consumer<ConsumerRecord<byte[], byte[]>> action) {
    Changelogs.readToEnd(clientSettings, topic, new ByteArrayDeserializer(), action);
  }

  /** The record at {@code offset} of {@code topic}/{@code partition}, if there is one. */
  static Optional<ConsumerRecord<byte[], byte[]>> at(
      Map<String, Object> clientSettings, String topic, int partition, long offset) {
    try (KafkaConsumer<byte[], byte[]> c = consumer(clientSettings)) {
      TopicPartition tp = new TopicPartition(topic, partition);
      c.assign(List.of(tp));
      long end = c.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
      if (offset >= end) {
        return Optional.empty();
      }
      c.seek(tp, offset);
      List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.isEmpty() && c.position(tp) < end && System.nanoTime() < deadline) {
        c.poll(Duration.ofMillis(200))
            .forEach(
                r -> {
                  if (r.offset() == offset) {
                    got.add(r);
                  }
                });
        if (c.position(tp) > offset && got.isEmpty()) {
          return Optional.empty(); // deleted by retention, or a transaction marker
        }
      }
      return got.stream().findFirst();
    }
  }

  private static KafkaConsumer<byte[], byte[]> consumer(Map<String, Object> clientSettings) {
    Map<String, Object> m = new HashMap<>(clientSettings);
    m.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    m.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return new KafkaConsumer<>(m, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** {@code topic/partition/offset} into its parts. */
  record Coordinates(String topic, int partition, long offset) {
    static Coordinates parse(String s) {
      int b = s.lastIndexOf('/');
      int a = b < 1 ? -1 : s.lastIndexOf('/', b - 1);
      try {
        if (a <= 0 || b <= a) {
          throw new NumberFormatException();
        }
        return new Coordinates(
            s.substring(0, a),
            Integer.parseInt(s.substring(a + 1, b)),
            Long.parseLong(s.substring(b + 1)));
      } catch (NumberFormatException e) {
        throw new BadUsage(
            "'" + s + "' is not <topic>/<partition>/<offset>, e.g. sume.webhooks.dlq/3/1207");
      }
    }

    @Override
    public String toString() {
      return topic + "/" + partition + "/" + offset;
    }
  }
}
