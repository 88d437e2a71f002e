package dev.runlane.tools.kafka;

import dev.runlane.common.generation.Replay;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Copies the records the ingress wrote to a cancelled grow's input back into the input of the
 * generation made active again, keyed as before (so partitioned by run as the ingress partitions
 * it), with their timestamps and headers, exactly once however often it is run: each batch is
 * copied in a transaction that also commits how far it read, under a consumer group of its own
 * (D76). Records the grow itself copied there (marked {@link Replay#UNDECIDED_HEADER}) are left:
 * they are still in the target, undecided, where the generation made active reads them again.
 */
public final class CopyBack {
  private static final Duration READ_WITHIN = Duration.ofMinutes(30);

  private CopyBack() {}

  /**
   * Copies what {@code source} holds beyond what an earlier pass under {@code id} copied.
   *
   * @param id names the copy: its consumer group and transactional id are {@code
   *     runlane-tools/copy-back/<id>}
   * @return the records copied by this pass
   */
  public static long pass(
      Map<String, Object> clientSettings, String source, String target, String id) {
    String group = "runlane-tools/copy-back/" + id;
    Map<String, Object> c = new HashMap<>(clientSettings);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    // A grow input deleted by hand has nothing to copy; asking for it must not create it again.
    c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    Map<String, Object> p = new HashMap<>(clientSettings);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, group);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    try (KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(source, Duration.ofSeconds(30));
      if (infos == null || infos.isEmpty()) {
        return 0;
      }
      List<TopicPartition> tps =
          infos.stream().map(i -> new TopicPartition(source, i.partition())).toList();
      consumer.assign(tps);
      Map<TopicPartition, OffsetAndMetadata> done =
          consumer.committed(Set.copyOf(tps), Duration.ofSeconds(30));
      for (TopicPartition tp : tps) {
        OffsetAndMetadata at = done.get(tp);
        if (at == null) {
          consumer.seekToBeginning(List.of(tp));
        } else {
          consumer.seek(tp, at.offset());
        }
      }
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      producer.initTransactions();
      return copy(consumer, producer, tps, end, target);
    }
  }

  /** Copies batch by batch, each with the offsets it reached, up to {@code end}. */
  private static long copy(
      KafkaConsumer<byte[], byte[]> consumer,
      KafkaProducer<byte[], byte[]> producer,
      List<TopicPartition> tps,
      Map<TopicPartition, Long> end,
      String target) {
    long copied = 0;
    long deadline = System.nanoTime() + READ_WITHIN.toNanos();
    while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
      if (System.nanoTime() - deadline > 0) {
        throw new KafkaException("could not copy " + tps.get(0).topic() + " in " + READ_WITHIN);
      }
      ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
      if (batch.isEmpty()) {
        continue;
      }
      producer.beginTransaction();
      try {
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          if (r.headers().lastHeader(Replay.UNDECIDED_HEADER) == null) {
            producer.send(
                new ProducerRecord<>(target, null, r.timestamp(), r.key(), r.value(), r.headers()));
            copied++;
          }
        }
        Map<TopicPartition, OffsetAndMetadata> reached = new HashMap<>();
        for (TopicPartition tp : tps) {
          reached.put(tp, new OffsetAndMetadata(consumer.position(tp)));
        }
        producer.sendOffsetsToTransaction(reached, consumer.groupMetadata());
        producer.commitTransaction();
      } catch (RuntimeException e) {
        try {
          producer.abortTransaction();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
    }
    return copied;
  }
}
