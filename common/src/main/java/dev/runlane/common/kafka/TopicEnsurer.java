package dev.runlane.common.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the topics a service reads or writes when they are missing, so that start order does not
 * matter. Existing topics are left as they are.
 */
public final class TopicEnsurer {

  private static final Logger LOG = LoggerFactory.getLogger(TopicEnsurer.class);

  /** Room for headers and batch framing on top of the largest accepted body. */
  public static final int RECORD_OVERHEAD_BYTES = 64 * 1024;

  /** The broker's default {@code max.message.bytes}; never ask for less. */
  private static final int BROKER_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

  private TopicEnsurer() {}

  /**
   * The {@code max.message.bytes} (topics) and {@code max.request.size} (producers) every topic and
   * producer of the pipeline needs for bodies up to {@code maxBodyBytes}: both services create the
   * same topics, whichever starts first, so both must use this one rule.
   */
  public static int maxMessageBytes(int maxBodyBytes) {
    return Math.max(BROKER_DEFAULT_MAX_MESSAGE_BYTES, maxBodyBytes + RECORD_OVERHEAD_BYTES);
  }

  /** {@code topic} with {@code max.message.bytes} set, keeping its other configs. */
  public static NewTopic sized(NewTopic topic, int maxMessageBytes) {
    Map<String, String> configs = new LinkedHashMap<>();
    if (topic.configs() != null) {
      configs.putAll(topic.configs());
    }
    configs.put(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(maxMessageBytes));
    return topic.configs(configs);
  }

  /**
   * Creates the topics of {@code topics} that do not exist yet. A topic created concurrently by
   * another instance ({@code TopicExistsException}) counts as created.
   *
   * @param admin the admin client (not closed)
   * @param topics the topics with the settings to create them with
   * @param timeout the time allowed for the whole operation
   * @throws IllegalStateException if the service is not authorized to create a missing topic (the
   *     message names the topics and says they must be created beforehand)
   * @throws TimeoutException if the brokers did not answer within {@code timeout} (retriable)
   * @throws KafkaException if a topic could not be created for another reason (e.g. a replication
   *     factor above the broker count)
   * @throws InterruptException if interrupted (the interrupt flag is set again)
   */
  public static void ensure(Admin admin, Collection<NewTopic> topics, Duration timeout) {
    Map<String, NewTopic> wanted = new LinkedHashMap<>();
    topics.forEach(t -> wanted.putIfAbsent(t.name(), t));
    if (wanted.isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + timeout.toNanos();

    Set<String> existing =
        await(
            admin.listTopics(new ListTopicsOptions().timeoutMs(remainingMillis(deadline))).names(),
            deadline,
            wanted.keySet(),
            "list");
    List<NewTopic> missing =
        wanted.values().stream().filter(t -> !existing.contains(t.name())).toList();
    if (missing.isEmpty()) {
      LOG.debug("topics {} exist", wanted.keySet());
      return;
    }

    Map<String, KafkaFuture<Void>> results =
        admin
            .createTopics(missing, new CreateTopicsOptions().timeoutMs(remainingMillis(deadline)))
            .values();
    List<String> created = new ArrayList<>();
    List<String> fresh = new ArrayList<>(); // created here or a moment ago by another instance
    List<NewTopic> unauthorized = new ArrayList<>();
    for (NewTopic topic : missing) {
      try {
        await(results.get(topic.name()), deadline, List.of(topic.name()), "create");
        created.add(topic.name());
        fresh.add(topic.name());
      } catch (TopicExistsException e) {
        LOG.debug("topic {} was created concurrently", topic.name());
        fresh.add(topic.name());
      } catch (TopicAuthorizationException | ClusterAuthorizationException e) {
        unauthorized.add(topic);
      }
    }
    if (!fresh.isEmpty()) {
      awaitServed(admin, fresh, awaitLeaders(admin, fresh, deadline), deadline);
    }
    if (!created.isEmpty()) {
      LOG.info("created topics {}", created);
    }
    if (!unauthorized.isEmpty()) {
      throw new IllegalStateException(
          "not authorized to create topics "
              + describe(unauthorized)
              + ": this service may not create topics, so they must be created beforehand"
              + " with these settings");
    }
  }

  /**
   * Waits until every partition of the new topics has a leader in the metadata, and returns the
   * partitions. Producing earlier races the broker applying the topic: an idempotent producer's
   * first batch can be refused while a later one is accepted, and the first then fails
   * OUT_OF_ORDER_SEQUENCE until its delivery timeout (KAFKA-15591, D10).
   */
  private static List<TopicPartition> awaitLeaders(
      Admin admin, List<String> topics, long deadline) {
    while (true) {
      List<TopicPartition> partitions = new ArrayList<>();
      boolean ready;
      try {
        Map<String, TopicDescription> described =
            await(
                admin
                    .describeTopics(
                        topics, new DescribeTopicsOptions().timeoutMs(remainingMillis(deadline)))
                    .allTopicNames(),
                deadline,
                topics,
                "describe");
        described.forEach(
            (name, d) ->
                d.partitions()
                    .forEach(p -> partitions.add(new TopicPartition(name, p.partition()))));
        ready =
            described.values().stream()
                .flatMap(d -> d.partitions().stream())
                .allMatch(p -> p.leader() != null && !p.leader().isEmpty());
      } catch (UnknownTopicOrPartitionException e) {
        ready = false; // the broker that answered has not applied the creation yet
      }
      if (ready) {
        return partitions;
      }
      if (System.nanoTime() - deadline > 0) {
        throw timeout(topics, "see leaders for", null);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  /**
   * Waits until the leader of every new partition serves it: a {@code ListOffsets} of each is
   * answered. A leader in the metadata is not enough (D10). A broker publishes a new topic to its
   * metadata cache before its replica manager has made the partitions, and produce requests in
   * between are refused as NOT_LEADER_OR_FOLLOWER: that is the window of KAFKA-15591, 100-340 ms on
   * the 2-core test machine. Produce and ListOffsets both need the partition in the replica
   * manager.
   */
  private static void awaitServed(
      Admin admin, List<String> topics, List<TopicPartition> partitions, long deadline) {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    partitions.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
    while (true) {
      try {
        await(
            admin
                .listOffsets(latest, new ListOffsetsOptions().timeoutMs(remainingMillis(deadline)))
                .all(),
            deadline,
            topics,
            "list offsets of");
        return;
      } catch (TimeoutException e) {
        throw e;
      } catch (RetriableException e) {
        // not served yet (the admin client retries some of these itself, until its own timeout)
        if (System.nanoTime() - deadline > 0) {
          throw timeout(topics, "see every partition served for", e);
        }
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  /** A topic with {@code cleanup.policy=compact} (latest value per key, e.g. run state). */
  public static NewTopic compacted(String name, TopicSettings s) {
    return plain(name, s)
        .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
  }

  /** A topic with the broker's default configs (delete after retention). */
  public static NewTopic plain(String name, TopicSettings s) {
    Optional<Short> rf =
        s.replicationFactor() == TopicSettings.BROKER_DEFAULT
            ? Optional.empty()
            : Optional.of(s.replicationFactor());
    return new NewTopic(name, Optional.of(s.partitions()), rf);
  }

  private static <T> T await(
      KafkaFuture<T> future, long deadline, Collection<String> names, String action) {
    try {
      return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptException(e);
      // Named in full: the JDK's TimeoutException, where the rest of this class throws Kafka's.
    } catch (java.util.concurrent.TimeoutException e) {
      throw timeout(names, action, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof TimeoutException) {
        throw timeout(names, action, cause);
      }
      if (cause instanceof KafkaException k) {
        // The type matters to the caller (topic exists, authorization), so keep it.
        throw k;
      }
      throw new KafkaException("could not " + action + " topics " + names, cause);
    }
  }

  private static TimeoutException timeout(Collection<String> names, String action, Throwable e) {
    return new TimeoutException(
        "could not " + action + " topics " + names + " in time: is Kafka reachable?", e);
  }

  private static int remainingMillis(long deadline) {
    long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, ms));
  }

  private static String describe(List<NewTopic> topics) {
    List<String> out = new ArrayList<>();
    for (NewTopic t : topics) {
      StringBuilder sb =
          new StringBuilder(t.name()).append(" (partitions=").append(t.numPartitions());
      if (t.replicationFactor() > 0) {
        sb.append(", replication.factor=").append(t.replicationFactor());
      }
      if (t.configs() != null) {
        t.configs().forEach((k, v) -> sb.append(", ").append(k).append('=').append(v));
      }
      out.add(sb.append(')').toString());
    }
    return String.join(", ", out);
  }
}
