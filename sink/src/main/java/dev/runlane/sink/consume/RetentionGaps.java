package dev.runlane.sink.consume;

import dev.runlane.sink.SinkMetrics;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The assigned partitions whose stored offset is below the log start: retention deleted records the
 * database never got. The sink does not skip them on its own (Kafka's {@code
 * auto.offset.reset=earliest} would, in silence): such a partition stays paused, the sink not
 * ready, the gap counted and logged once with the command that accepts it (D63).
 */
final class RetentionGaps {
  private static final Logger log = LoggerFactory.getLogger(RetentionGaps.class);

  /** A stored offset outside the log: below its start (deleted), or past its end (ahead). */
  private record Gap(long stored, long logStart, long logEnd) {
    boolean ahead() {
      return logEnd >= 0;
    }
  }

  private final String group;
  private final SinkMetrics metrics;
  private final Map<TopicPartition, Gap> gaps = new HashMap<>();
  private volatile boolean any;

  RetentionGaps(String group, SinkMetrics metrics) {
    this.group = group;
    this.metrics = metrics;
  }

  /** Whether no partition is at a gap; safe from any thread. */
  boolean none() {
    return !any;
  }

  boolean any() {
    return any;
  }

  Set<TopicPartition> partitions() {
    return Set.copyOf(gaps.keySet());
  }

  /** {@code tp}'s stored offset {@code stored} is below its log start. */
  void found(TopicPartition tp, long stored, long logStart) {
    Gap gap = new Gap(stored, logStart, -1);
    if (!gap.equals(gaps.put(tp, gap))) {
      log.error(
          "{}: the stored offset {} is below the log start {}: retention deleted {} record(s)"
              + " the database never got. The partition waits (not ready). To accept the loss"
              + " and go on from {}: runlane sink accept-gap --partition {}"
              + " (SINK_GROUP_ID={})",
          tp,
          stored,
          logStart,
          logStart - stored,
          logStart,
          tp.partition(),
          group);
    }
    update();
  }

  /**
   * {@code tp}'s stored offset {@code stored} is past its log end: the topic was deleted and made
   * again, or its log truncated. Reading from there would skip every record written below it.
   */
  void ahead(TopicPartition tp, long stored, long logEnd) {
    Gap gap = new Gap(stored, -1, logEnd);
    if (!gap.equals(gaps.put(tp, gap))) {
      log.error(
          "{}: the stored offset {} is past the log end {}: the topic was made again or its log"
              + " truncated, and records written from here on would be skipped. The partition"
              + " waits (not ready). Say where to go on from (0 for a topic made again): runlane"
              + " sink accept-gap --partition {} --to <offset> (SINK_GROUP_ID={})",
          tp,
          stored,
          logEnd,
          tp.partition(),
          group);
    }
    update();
  }

  /** {@code tp} is positioned: no gap, or an accepted one. */
  void closed(TopicPartition tp) {
    if (gaps.remove(tp) != null) {
      log.info("{}: the retention gap was accepted; the partition goes on", tp);
    }
    update();
  }

  /** Partitions no longer assigned. */
  void forget(Collection<TopicPartition> partitions) {
    partitions.forEach(gaps::remove);
    update();
  }

  void retainAll(Set<TopicPartition> assigned) {
    gaps.keySet().retainAll(assigned);
    update();
  }

  private void update() {
    any = !gaps.isEmpty();
    metrics.retentionGap(
        gaps.values().stream().filter(g -> !g.ahead()).mapToLong(g -> g.logStart - g.stored).sum());
    metrics.offsetsAhead(gaps.values().stream().filter(Gap::ahead).count());
  }
}
