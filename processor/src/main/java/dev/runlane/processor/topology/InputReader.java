package dev.runlane.processor.topology;

import java.util.Map;
import java.util.OptionalLong;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads the input as a task starts: held events' records back by offset, as a held event's body
 * stays in the input topic, where it already is durably, instead of being written again to the held
 * store's changelog (D49); and where the task's last commit left the input, so that its reorder
 * window's idle clock waits until the task has read again what that commit did not cover (D67).
 */
public interface InputReader {
  /** For topologies that never restart (TopologyTestDriver tests). */
  InputReader NONE =
      new InputReader() {
        @Override
        public Map<Long, ConsumerRecord<byte[], byte[]>> read(
            TopicPartition partition, SortedSet<Long> offsets) {
          throw new IllegalStateException(
              "held events at " + partition + " " + offsets + " need an input reader");
        }

        @Override
        public OptionalLong lastUncommitted(TopicPartition partition, String applicationId) {
          return OptionalLong.empty();
        }
      };

  /**
   * The committed records at {@code offsets} of {@code partition}, by offset.
   *
   * @throws IllegalStateException if one of them cannot be read back
   */
  Map<Long, ConsumerRecord<byte[], byte[]>> read(TopicPartition partition, SortedSet<Long> offsets);

  /**
   * The offset of the last record of {@code partition} that the last commit of the Streams
   * application {@code applicationId} does not cover, as the input stands now; empty when that
   * commit covers every record.
   *
   * @throws IllegalStateException if the input cannot be read in time
   */
  OptionalLong lastUncommitted(TopicPartition partition, String applicationId);

  /**
   * Whether the task that has read {@code partition} up to {@code highestRead} is behind its input:
   * the input's last stable offset is past both that and the group's committed offset. Looked up
   * off the stream thread; without a broker (TopologyTestDriver) never behind.
   */
  default CompletableFuture<Boolean> behindAsync(
      TopicPartition partition, String applicationId, long highestRead) {
    return CompletableFuture.completedFuture(false);
  }

  /**
   * {@link #lastUncommitted}, answered later: a task starts on its stream thread, which must not
   * wait on brokers while its transaction is open (D67). Here at once, on the calling thread.
   */
  default CompletableFuture<OptionalLong> lastUncommittedAsync(
      TopicPartition partition, String applicationId) {
    try {
      return CompletableFuture.completedFuture(lastUncommitted(partition, applicationId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
