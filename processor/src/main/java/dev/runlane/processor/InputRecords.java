package dev.runlane.processor;

import dev.runlane.processor.topology.InputReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads held events' input records back when a task starts with events held (D49), with a consumer
 * of its own for each read: it happens once per task start at most, and a consumer is not to be
 * shared between stream threads.
 */
final class InputRecords implements InputReader {
  /** Long enough for a slow broker; past it the stream thread fails and its tasks start again. */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  private final Map<String, Object> consumerSettings;

  /**
   * @param clientSettings bootstrap servers and every Kafka client setting of the processor
   */
  InputRecords(Map<String, Object> clientSettings, String clientId) {
    Map<String, Object> m = new HashMap<>(clientSettings);
    m.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // A held offset the input no longer has (its retention deleted it) must fail, not skip.
    m.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    m.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    this.consumerSettings = Map.copyOf(m);
  }

  @Override
  public Map<Long, ConsumerRecord<byte[], byte[]>> read(
      TopicPartition partition, SortedSet<Long> offsets) {
    Map<Long, ConsumerRecord<byte[], byte[]>> found = new HashMap<>();
    long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
    Map<String, Object> settings = new HashMap<>(consumerSettings);
    // One client id per partition: stream threads may read back at once, and two consumers with
    // one id clash in their metrics registrations.
    settings.put(
        ConsumerConfig.CLIENT_ID_CONFIG,
        consumerSettings.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-" + partition.partition());
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.assign(List.of(partition));
      long end = consumer.endOffsets(List.of(partition), READ_TIMEOUT).get(partition);
      if (offsets.last() >= end) {
        throw new IllegalStateException(
            "held events at offsets up to "
                + offsets.last()
                + " of "
                + partition
                + ", which ends at "
                + end
                + ": the input changed under the processor's state");
      }
      consumer.seek(partition, offsets.first());
      while (consumer.position(partition) <= offsets.last()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "could not read the held events' records back from "
                  + partition
                  + " within "
                  + READ_TIMEOUT.toSeconds()
                  + " s");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (offsets.contains(r.offset())) {
            found.put(r.offset(), r);
          }
        }
      }
    } catch (OffsetOutOfRangeException e) {
      throw new IllegalStateException(
          "held events' records are no longer in " + partition + " (its retention?)", e);
    }
    if (found.size() < offsets.size()) {
      SortedSet<Long> missing = new TreeSet<>(offsets);
      missing.removeAll(found.keySet());
      throw new IllegalStateException(
          "held events' records at offsets " + missing + " of " + partition + " are missing");
    }
    return found;
  }
}
