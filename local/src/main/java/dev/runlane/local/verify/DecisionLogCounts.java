package dev.runlane.local.verify;

import dev.runlane.common.decision.Decision;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What the decision log says the processor decided (D86): decisions by outcome and layer, read
 * {@code read_committed}, so the report's per-layer counts come from the record that is written
 * with the outputs rather than from counters, which an aborted transaction leaves counted.
 */
final class DecisionLogCounts {
  private final Map<String, Long> byOutcomeAndLayer = new TreeMap<>();
  private final boolean exists;
  private long deciding;

  private DecisionLogCounts(boolean exists) {
    this.exists = exists;
  }

  /**
   * Reads {@code topic} whole, again until it holds at least {@code atLeast} deciding records (the
   * last transactions may still be committing) or {@code timeout} passed.
   */
  static DecisionLogCounts read(String bootstrap, String topic, long atLeast, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      DecisionLogCounts counts = readOnce(bootstrap, topic);
      if (!counts.exists || counts.deciding >= atLeast || System.nanoTime() - deadline > 0) {
        return counts;
      }
      LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
    }
  }

  private static DecisionLogCounts readOnce(String bootstrap, String topic) {
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            "read_committed",
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            false,
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
            5000,
            ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG,
            false);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
      if (infos == null || infos.isEmpty()) {
        return new DecisionLogCounts(false);
      }
      List<TopicPartition> tps =
          infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(10));
      DecisionLogCounts counts = new DecisionLogCounts(true);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          counts.add(Decision.parse(r.value()));
        }
      }
      return counts;
    }
  }

  private void add(Decision d) {
    byOutcomeAndLayer.merge(d.outcome().tag() + "/" + d.layer(), 1L, Long::sum);
    if (d.outcome().decidesInput()) {
      deciding++;
    }
  }

  /** Whether the topic exists (not with {@code DECISION_LOG=off}). */
  boolean exists() {
    return exists;
  }

  /** Records that decide an input record: all but {@code released}. */
  long deciding() {
    return deciding;
  }

  long count(String outcome, String layer) {
    return byOutcomeAndLayer.getOrDefault(outcome + "/" + layer, 0L);
  }

  /**
   * Every acked delivery wrote one input record before its 2xx, and every input record is decided
   * once: so at least as many decisions as acks (more where a timed-out attempt was written too).
   */
  Check everyAckDecided(long acks, long attempts, String topic) {
    if (!exists) {
      return new Check(
          "every acked delivery has a decision",
          false,
          topic + " does not exist: the processor runs with DECISION_LOG=off");
    }
    return new Check(
        "every acked delivery has a decision",
        deciding >= acks,
        deciding
            + " decisions in "
            + topic
            + " for "
            + acks
            + " acked deliveries ("
            + attempts
            + " attempts)");
  }
}
