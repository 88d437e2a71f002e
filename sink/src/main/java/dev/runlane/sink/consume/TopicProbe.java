package dev.runlane.sink.consume;

import dev.runlane.sink.SinkMetrics;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the broker, about once a second, where the sink's partitions begin and end, for two truths
 * the consumer's own position cannot tell (D63): the lag is what the topic holds past the offsets
 * stored in the database, also while the sink waits for the database or stands at a retention gap
 * (the position has moved past a failed batch, so the consumer's lag read 0 through a stall); and
 * the broker answers, so readiness follows it after start.
 */
final class TopicProbe {
  private static final Logger log = LoggerFactory.getLogger(TopicProbe.class);

  private static final Duration INTERVAL = Duration.ofSeconds(1);

  /** A broker slower than this to list offsets counts as not answering. */
  static final Duration TIMEOUT = Duration.ofSeconds(2);

  private final Consumer<String, byte[]> consumer;
  private final TopicPartition anyPartition;
  private final SinkMetrics metrics;
  private volatile boolean brokerUp = true;
  private long lastProbe = System.nanoTime() - INTERVAL.toNanos();

  TopicProbe(Consumer<String, byte[]> consumer, String topic, SinkMetrics metrics) {
    this.consumer = consumer;
    this.anyPartition = new TopicPartition(topic, 0);
    this.metrics = metrics;
  }

  boolean brokerUp() {
    return brokerUp;
  }

  /**
   * Where each partition's log starts now (records below it were deleted by retention).
   *
   * @throws KafkaException when the broker does not answer in time
   */
  Map<TopicPartition, Long> logStarts(Collection<TopicPartition> partitions) {
    return consumer.beginningOffsets(partitions, TIMEOUT);
  }

  /**
   * Where each partition's log ends now (its last stable offset, read_committed).
   *
   * @throws KafkaException when the broker does not answer in time
   */
  Map<TopicPartition, Long> logEnds(Collection<TopicPartition> partitions) {
    return consumer.endOffsets(partitions, TIMEOUT);
  }

  /**
   * Sets the lag gauge to the records past the stored offsets of the assigned partitions, unless
   * that was done less than a second ago.
   *
   * @param stored each assigned partition's stored next offset as last read or written; a partition
   *     absent or null counts from its log start
   */
  void maybeProbe(Set<TopicPartition> assigned, Map<TopicPartition, Long> stored) {
    if (System.nanoTime() - lastProbe < INTERVAL.toNanos()) {
      return;
    }
    lastProbe = System.nanoTime();
    try {
      // Listing offsets is a request to the broker even with nothing assigned: the reachability
      // probe of an idle member of the group.
      Map<TopicPartition, Long> ends =
          consumer.endOffsets(assigned.isEmpty() ? Set.of(anyPartition) : assigned, TIMEOUT);
      Map<TopicPartition, Long> starts =
          assigned.isEmpty() ? Map.of() : consumer.beginningOffsets(assigned, TIMEOUT);
      long lag = 0;
      for (TopicPartition tp : assigned) {
        Long end = ends.get(tp);
        Long from = stored.get(tp) != null ? stored.get(tp) : starts.get(tp);
        if (end != null && from != null) {
          lag += Math.max(0, end - from);
        }
      }
      metrics.lag(lag);
      if (!brokerUp) {
        log.info("Kafka answers again");
      }
      brokerUp = true;
    } catch (WakeupException e) {
      throw e; // stop() woke the consumer: no verdict on the broker
    } catch (KafkaException e) {
      if (brokerUp) {
        log.warn(
            "Kafka does not answer within {} ({}): not ready until it does; the lag gauge keeps"
                + " its last value",
            TIMEOUT,
            e.toString());
      }
      brokerUp = false;
    }
  }
}
