package dev.runlane.tools.kafka;

import dev.runlane.common.generation.Replay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Copies input records that a generation never decided into another input topic, keyed as before
 * (so partitioned by run over the target's partitions), with their timestamps and headers: the
 * undecided tail of an input whose partitions were added by hand.
 */
public final class InputCopy {
  private InputCopy() {}

  /**
   * @param records how many records were copied
   * @param upTo the source's end offset each partition was copied up to
   */
  public record Copied(long records, Map<Integer, Long> upTo) {}

  /**
   * For each partition of {@code source} in order: the records at {@code extra} offsets below
   * {@code from}, then every record from {@code from} (0 where absent) to the end.
   *
   * @return what was copied
   */
  public static Copied tail(
      Map<String, Object> clientSettings,
      String source,
      int partitions,
      Map<Integer, Long> from,
      Map<Integer, List<Long>> extra,
      String target,
      int generation) {
    byte[] copiedBy = Integer.toString(generation).getBytes(StandardCharsets.UTF_8);
    Map<String, Object> c = new HashMap<>(clientSettings);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    Map<String, Object> p = new HashMap<>(clientSettings);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    long copied = 0;
    Map<Integer, Long> upTo = new TreeMap<>();
    AtomicReference<Exception> failed = new AtomicReference<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int partition = 0; partition < partitions; partition++) {
        TopicPartition tp = new TopicPartition(source, partition);
        long start = from.getOrDefault(partition, 0L);
        Set<Long> parked = Set.copyOf(extra.getOrDefault(partition, List.of()));
        long first = parked.stream().mapToLong(Long::longValue).min().orElse(start);
        consumer.assign(List.of(tp));
        long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
        upTo.put(partition, end);
        consumer.seek(tp, Math.min(first, start));
        while (consumer.position(tp) < end) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            if (r.offset() >= start || parked.contains(r.offset())) {
              // Marked, so that the new generation decides it on its run store alone: the old one
              // may have decided it in a transaction that aborted, leaving a Redis marker (D35).
              r.headers().remove(Replay.UNDECIDED_HEADER).add(Replay.UNDECIDED_HEADER, copiedBy);
              producer.send(
                  new ProducerRecord<>(
                      target, null, r.timestamp(), r.key(), r.value(), r.headers()),
                  (m, e) -> {
                    if (e != null) {
                      failed.compareAndSet(null, e);
                    }
                  });
              copied++;
            }
          }
        }
      }
      producer.flush();
    }
    if (failed.get() != null) {
      throw new KafkaException("copying " + source + " to " + target + " failed", failed.get());
    }
    return new Copied(copied, upTo);
  }
}
