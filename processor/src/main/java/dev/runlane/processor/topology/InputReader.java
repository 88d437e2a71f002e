package dev.runlane.processor.topology;

import java.util.Map;
import java.util.SortedSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads input records back by offset. A held event's body stays in the input topic, where it
 * already is durably, instead of being written again to the held store's changelog; a task that
 * starts with held events reads their bodies back from there (D49).
 */
@FunctionalInterface
public interface InputReader {
  /** For topologies that never restart with held events (TopologyTestDriver tests). */
  InputReader NONE =
      (partition, offsets) -> {
        throw new IllegalStateException(
            "held events at " + partition + " " + offsets + " need an input reader");
      };

  /**
   * The committed records at {@code offsets} of {@code partition}, by offset.
   *
   * @throws IllegalStateException if one of them cannot be read back
   */
  Map<Long, ConsumerRecord<byte[], byte[]>> read(TopicPartition partition, SortedSet<Long> offsets);
}
