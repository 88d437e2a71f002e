package dev.runlane.tools.kafka;

import dev.runlane.common.generation.StateTopics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Reading the processor's changelogs to their end, as a restoring task does (read_committed). */
public final class Changelogs {
  private Changelogs() {}

  /**
   * The input offsets, by partition, of what a generation read but has not applied: events parked
   * in its pending store, and those its reorder window holds (D46), which are decided but were
   * never emitted. Sorted; empty where neither changelog exists.
   */
  public static Map<Integer, List<Long>> undecided(
      Map<String, Object> clientSettings, String applicationId) {
    Map<Integer, TreeSet<Long>> merged = new TreeMap<>();
    for (String changelog :
        List.of(
            StateTopics.pendingChangelog(applicationId),
            StateTopics.heldChangelog(applicationId))) {
      parked(clientSettings, changelog)
          .forEach((p, offsets) -> merged.computeIfAbsent(p, k -> new TreeSet<>()).addAll(offsets));
    }
    Map<Integer, List<Long>> out = new TreeMap<>();
    merged.forEach((p, offsets) -> out.put(p, List.copyOf(offsets)));
    return out;
  }

  /**
   * The offsets still parked undecided in a pending-events changelog, by partition: keys whose last
   * record is not a tombstone. Empty if the changelog does not exist.
   */
  public static Map<Integer, List<Long>> parked(Map<String, Object> clientSettings, String topic) {
    Map<Integer, TreeSet<Long>> live = new TreeMap<>();
    readToEnd(
        clientSettings,
        topic,
        new LongDeserializer(),
        (ConsumerRecord<Long, byte[]> r) -> {
          TreeSet<Long> keys = live.computeIfAbsent(r.partition(), p -> new TreeSet<>());
          if (r.value() == null) {
            keys.remove(r.key());
          } else {
            keys.add(r.key());
          }
        });
    Map<Integer, List<Long>> out = new TreeMap<>();
    live.forEach(
        (p, keys) -> {
          if (!keys.isEmpty()) {
            out.put(p, new ArrayList<>(keys));
          }
        });
    return out;
  }

  /**
   * Copies every record of a run-store changelog into {@code target}, keyed as before and
   * partitioned by the default partitioner over {@code target}'s partitions: the partition a task
   * of the new generation restores the run from, since the ingress keys the input the same way.
   * Copying is idempotent (same keys, same values, in order per key), so an interrupted copy is
   * redone from the start.
   *
   * @return the records copied
   */
  public static long copy(Map<String, Object> clientSettings, String source, String target) {
    Map<String, Object> p = new HashMap<>(clientSettings);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    long[] copied = {0};
    AtomicReference<Exception> failed = new AtomicReference<>();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      readToEnd(
          clientSettings,
          source,
          new StringDeserializer(),
          (ConsumerRecord<String, byte[]> r) -> {
            producer.send(
                new ProducerRecord<>(target, null, r.timestamp(), r.key(), r.value()),
                (m, e) -> {
                  if (e != null) {
                    failed.compareAndSet(null, e);
                  }
                });
            copied[0]++;
          });
      producer.flush();
    }
    if (failed.get() != null) {
      throw new KafkaException("copying " + source + " to " + target + " failed", failed.get());
    }
    return copied[0];
  }

  /** Reads every partition of {@code topic} from the beginning to its last stable offset. */
  public static <K> void readToEnd(
      Map<String, Object> clientSettings,
      String topic,
      Deserializer<K> keys,
      Consumer<ConsumerRecord<K, byte[]>> each) {
    Map<String, Object> c = new HashMap<>(clientSettings);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    try (KafkaConsumer<K, byte[]> consumer =
        new KafkaConsumer<>(c, keys, new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
      if (infos == null || infos.isEmpty()) {
        return;
      }
      List<TopicPartition> tps =
          infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
      while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        consumer.poll(Duration.ofMillis(200)).forEach(each);
        if (System.nanoTime() - deadline > 0) {
          throw new KafkaException("could not read " + topic + " to its end in 30 minutes");
        }
      }
    }
  }
}
