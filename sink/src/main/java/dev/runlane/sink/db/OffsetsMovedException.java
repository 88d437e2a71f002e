package dev.runlane.sink.db;

import org.apache.kafka.common.TopicPartition;

/**
 * The stored offset of a partition was not where this sink left it: another sink instance wrote the
 * partition meanwhile (after a rebalance this one had not seen yet). The batch is rolled back and
 * the partition positioned again from the database.
 */
public final class OffsetsMovedException extends Exception {
  private static final long serialVersionUID = 1L;

  public OffsetsMovedException(TopicPartition partition, Long expected) {
    super(
        "the stored offset of "
            + partition
            + " is no longer "
            + (expected == null ? "absent" : expected));
  }
}
