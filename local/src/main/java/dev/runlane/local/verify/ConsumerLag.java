package dev.runlane.local.verify;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/** How far a consumer group (the processor's application id) is behind the end of a topic. */
public final class ConsumerLag {

  private static final long TIMEOUT_MS = 5_000;

  private ConsumerLag() {}

  /**
   * The summed lag of {@code groupId} on {@code topic}: end offset minus committed offset per
   * partition (the end offset where nothing is committed yet), or -1 when it cannot be read.
   */
  public static long of(Admin admin, String groupId, String topic) {
    try {
      TopicDescription description =
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
              .get(topic);
      Map<TopicPartition, OffsetSpec> latest =
          description.partitions().stream()
              .collect(
                  Collectors.toMap(
                      p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
      Map<TopicPartition, ListOffsetsResultInfo> ends =
          admin.listOffsets(latest).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
      Map<TopicPartition, OffsetAndMetadata> committed =
          admin
              .listConsumerGroupOffsets(groupId)
              .partitionsToOffsetAndMetadata()
              .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
      long lag = 0;
      for (Map.Entry<TopicPartition, ListOffsetsResultInfo> e : ends.entrySet()) {
        OffsetAndMetadata c = committed.get(e.getKey());
        lag += Math.max(0, e.getValue().offset() - (c == null ? 0 : c.offset()));
      }
      return lag;
    } catch (ExecutionException | TimeoutException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
