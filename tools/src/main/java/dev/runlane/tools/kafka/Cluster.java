package dev.runlane.tools.kafka;

import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicSettings;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** The admin questions the procedures ask, each answered or thrown within the API timeout. */
public final class Cluster implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final Admin admin;

  public Cluster(Map<String, Object> clientSettings) {
    this.admin = Admin.create(clientSettings);
  }

  /** The topic's partition count, or empty if it does not exist. */
  public Optional<Integer> partitions(String topic) {
    try {
      return Optional.of(
          get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic).partitions().size());
    } catch (UnknownTopicOrPartitionException e) {
      return Optional.empty();
    }
  }

  /** Members of the consumer group (the processors of one generation); 0 if it has none. */
  public int members(String group) {
    try {
      ConsumerGroupDescription d =
          get(admin.describeConsumerGroups(List.of(group)).all()).get(group);
      return d.members().size();
    } catch (GroupIdNotFoundException e) {
      return 0;
    }
  }

  /**
   * The group's committed offsets on {@code topic}, by partition; waits for offsets that a
   * transaction is still committing (requireStable), so none is missed.
   */
  public Map<Integer, Long> committed(String group, String topic) {
    Map<TopicPartition, OffsetAndMetadata> all =
        get(
            admin
                .listConsumerGroupOffsets(
                    group, new ListConsumerGroupOffsetsOptions().requireStable(true))
                .partitionsToOffsetAndMetadata());
    Map<Integer, Long> out = new TreeMap<>();
    all.forEach(
        (tp, om) -> {
          if (tp.topic().equals(topic) && om != null) {
            out.put(tp.partition(), om.offset());
          }
        });
    return out;
  }

  /**
   * Sets the group's committed offsets on {@code topic} (the group must have no member): how a grow
   * marks what it copied out of the input it retired (D71).
   */
  public void commit(String group, String topic, Map<Integer, Long> offsets) {
    Map<TopicPartition, OffsetAndMetadata> at = new HashMap<>();
    offsets.forEach((p, o) -> at.put(new TopicPartition(topic, p), new OffsetAndMetadata(o)));
    get(admin.alterConsumerGroupOffsets(group, at).all());
  }

  /** The end offset of each partition: for read_committed, where no open transaction is. */
  public Map<Integer, Long> endOffsets(String topic, int partitions, IsolationLevel isolation) {
    return offsets(topic, partitions, OffsetSpec.latest(), isolation);
  }

  public Map<Integer, Long> endOffsets(String topic, int partitions) {
    return endOffsets(topic, partitions, IsolationLevel.READ_UNCOMMITTED);
  }

  /** The first retained offset of each partition (above 0 once retention deleted records). */
  public Map<Integer, Long> startOffsets(String topic, int partitions) {
    return offsets(topic, partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
  }

  /**
   * The first offset of each partition whose record timestamp is at or after {@code time}; the end
   * offset where there is none.
   */
  public Map<Integer, Long> offsetsAt(String topic, int partitions, Instant time) {
    Map<Integer, Long> at =
        offsets(
            topic,
            partitions,
            OffsetSpec.forTimestamp(time.toEpochMilli()),
            IsolationLevel.READ_UNCOMMITTED);
    Map<Integer, Long> end = endOffsets(topic, partitions);
    Map<Integer, Long> out = new TreeMap<>();
    at.forEach((p, o) -> out.put(p, o < 0 ? end.get(p) : o));
    return out;
  }

  /** Whether any partition holds a transaction that is neither committed nor aborted yet. */
  public boolean openTransactions(String topic) {
    Optional<Integer> n = partitions(topic);
    if (n.isEmpty()) {
      return false;
    }
    return !endOffsets(topic, n.get(), IsolationLevel.READ_COMMITTED)
        .equals(endOffsets(topic, n.get(), IsolationLevel.READ_UNCOMMITTED));
  }

  /** The topic's configs set on the topic itself (not broker defaults). */
  public Map<String, String> topicConfigs(String topic) {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config config = get(admin.describeConfigs(List.of(r)).all()).get(r);
    Map<String, String> out = new HashMap<>();
    for (ConfigEntry e : config.entries()) {
      if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value() != null) {
        out.put(e.name(), e.value());
      }
    }
    return out;
  }

  /** Creates the topic if it is missing, with these configs. */
  public void create(String topic, int partitions, short replicationFactor, Map<String, String> c) {
    NewTopic t =
        TopicEnsurer.plain(topic, new TopicSettings(partitions, replicationFactor)).configs(c);
    TopicEnsurer.ensure(admin, List.of(t), TIMEOUT);
  }

  private Map<Integer, Long> offsets(
      String topic, int partitions, OffsetSpec spec, IsolationLevel isolation) {
    Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      ask.put(new TopicPartition(topic, p), spec);
    }
    Map<TopicPartition, ListOffsetsResultInfo> got =
        get(admin.listOffsets(ask, new ListOffsetsOptions(isolation)).all());
    Map<Integer, Long> out = new TreeMap<>();
    got.forEach((tp, info) -> out.put(tp.partition(), info.offset()));
    return out;
  }

  /** Sum of {@code to - from} over the partitions of {@code to} (missing {@code from} = 0). */
  public static long distance(Map<Integer, Long> from, Map<Integer, Long> to) {
    long sum = 0;
    for (Map.Entry<Integer, Long> e : to.entrySet()) {
      sum += Math.max(0, e.getValue() - from.getOrDefault(e.getKey(), 0L));
    }
    return sum;
  }

  /** Sum of offsets, for progress lines. */
  public static long total(Collection<Long> offsets) {
    return offsets.stream().mapToLong(Long::longValue).sum();
  }

  private static <T> T get(KafkaFuture<T> future) {
    try {
      return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted", e);
    } catch (TimeoutException e) {
      throw new KafkaException("Kafka did not answer within " + TIMEOUT + ": is it reachable?", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof KafkaException k) {
        throw k;
      }
      throw new KafkaException(e.getCause());
    }
  }

  @Override
  public void close() {
    admin.close(Duration.ofSeconds(5));
  }
}
