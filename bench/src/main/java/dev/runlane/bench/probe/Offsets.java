package dev.runlane.bench.probe;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * How far a consumer group has got through a topic: its end offsets next to the group's committed
 * ones. Under exactly-once, the processor's committed input offsets are its progress.
 */
public final class Offsets {
  private Offsets() {}

  /** The end offset of each partition of {@code topic}. */
  public static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
    int partitions =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
    Map<TopicPartition, OffsetSpec> req = new HashMap<>();
    for (int i = 0; i < partitions; i++) {
      req.put(new TopicPartition(topic, i), OffsetSpec.latest());
    }
    Map<TopicPartition, Long> out = new HashMap<>();
    admin.listOffsets(req).all().get().forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  /** Until {@code group} has committed every record {@code input} holds now. */
  public static void awaitCommitted(Admin admin, String group, String input, Duration timeout)
      throws Exception {
    Map<TopicPartition, Long> end = endOffsets(admin, input);
    long total = end.values().stream().mapToLong(Long::longValue).sum();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (committed(admin, group, end) < total) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            group + " has not committed all of " + input + " within " + timeout);
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
  }

  /** The group's committed offsets, summed over the partitions of {@code end}. */
  public static long committed(Admin admin, String group, Map<TopicPartition, Long> end)
      throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    long sum = 0;
    for (TopicPartition tp : end.keySet()) {
      OffsetAndMetadata o = offsets.get(tp);
      if (o != null) {
        sum += o.offset();
      }
    }
    return sum;
  }
}
