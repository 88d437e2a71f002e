package dev.runlane.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/** Reads a topic from its beginning to the end it had when the read began. */
public final class TopicReader {
  private TopicReader() {}

  /** Every record of every partition of {@code topic}; see {@link #readToEnd}. */
  public static <K, V> List<ConsumerRecord<K, V>> readAll(
      Consumer<K, V> consumer, String topic, Duration timeout) {
    List<TopicPartition> partitions =
        consumer.partitionsFor(topic, timeout).stream()
            .map(p -> new TopicPartition(topic, p.partition()))
            .toList();
    return readToEnd(consumer, partitions, timeout);
  }

  /**
   * Reads the partitions from the beginning until the consumer's position reaches the end offsets
   * (the last stable offsets under read_committed) taken at the start; fails after {@code timeout}.
   */
  public static <K, V> List<ConsumerRecord<K, V>> readToEnd(
      Consumer<K, V> consumer, Collection<TopicPartition> partitions, Duration timeout) {
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
    List<ConsumerRecord<K, V>> records = new ArrayList<>();
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

  private static boolean reached(Consumer<?, ?> consumer, Map<TopicPartition, Long> end) {
    return end.entrySet().stream()
        .allMatch(e -> consumer.position(e.getKey(), Duration.ofSeconds(10)) >= e.getValue());
  }
}
