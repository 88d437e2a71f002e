package dev.runlane.tools.ledger;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;

/**
 * Reads chosen partitions of a topic as {@code read_committed}, each from a given offset to a given
 * end (or its last stable offset), telling a progress listener as it goes.
 */
final class TopicScan {
  /** How often a long scan says where it is. */
  static final long PROGRESS_EVERY = 1_000_000;

  private TopicScan() {}

  /**
   * The partition of {@code key} among {@code partitions}: the producer's default partitioner, as
   * Streams' sinks and the ingress use it, so that a run's records are found in one partition.
   */
  static int partitionOf(String key, int partitions) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
  }

  /** How long a read waits without progress for a partition's last stable offset to move on. */
  static final Duration STALL = Duration.ofSeconds(60);

  /**
   * Reads {@code from} each partition's offset up to {@code to} (exclusive; absent: the last stable
   * offset when the scan starts). A partition's {@code to} past its last stable offset is waited
   * for, as open transactions end, up to {@link #STALL} without progress.
   *
   * @param progress told every {@link #PROGRESS_EVERY} records of the count read so far
   * @return where each partition's read stopped: the next offset to read there
   */
  static Map<Integer, Long> read(
      Map<String, Object> clientSettings,
      String topic,
      Map<Integer, Long> from,
      Map<Integer, Long> to,
      Consumer<ConsumerRecord<byte[], byte[]>> each,
      Consumer<Long> progress) {
    Map<String, Object> c = new HashMap<>(clientSettings);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
    c.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 * 1024 * 1024);
    c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 16 * 1024 * 1024);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps =
          from.keySet().stream().map(p -> new TopicPartition(topic, p)).toList();
      consumer.assign(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      Map<TopicPartition, Long> stop = new HashMap<>();
      for (TopicPartition tp : tps) {
        Long limit = to.get(tp.partition());
        stop.put(tp, limit == null ? end.get(tp) : limit);
        consumer.seek(tp, from.get(tp.partition()));
      }
      long[] read = {0};
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
      long progressed = System.nanoTime();
      long behind = Long.MAX_VALUE;
      while (true) {
        long left = 0;
        for (TopicPartition tp : tps) {
          left += Math.max(0, stop.get(tp) - consumer.position(tp));
        }
        if (left == 0) {
          break;
        }
        if (left < behind) {
          behind = left;
          progressed = System.nanoTime();
        } else if (System.nanoTime() - progressed > STALL.toNanos()) {
          throw new KafkaException(
              "could not read "
                  + topic
                  + " up to "
                  + stop
                  + " in "
                  + STALL.toSeconds()
                  + " s: an open transaction holds its last stable offset back");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.offset() < stop.get(new TopicPartition(r.topic(), r.partition()))) {
            each.accept(r);
            if (++read[0] % PROGRESS_EVERY == 0) {
              progress.accept(read[0]);
            }
          }
        }
        if (System.nanoTime() - deadline > 0) {
          throw new KafkaException("could not read " + topic + " to its end in 30 minutes");
        }
      }
      Map<Integer, Long> stopped = new HashMap<>();
      stop.forEach(
          (tp, offset) -> stopped.put(tp.partition(), Math.max(offset, from.get(tp.partition()))));
      return stopped;
    }
  }
}
