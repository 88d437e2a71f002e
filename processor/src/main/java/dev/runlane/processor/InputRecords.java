package dev.runlane.processor;

import dev.runlane.processor.topology.InputReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the input as a task starts: held events' records back (D49), and where the task's last
 * commit left the input (D67). A consumer of its own for each call: a call happens once per task
 * start at most, and a consumer is not to be shared between stream threads.
 */
final class InputRecords implements InputReader {
  /**
   * Where tasks look up their uncommitted tail, off their stream threads (D67): daemon threads, as
   * a lookup still running at shutdown has nothing to finish.
   */
  private static final ExecutorService LOOKUPS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "processor-tail-lookup");
            t.setDaemon(true);
            return t;
          });

  /**
   * Where tasks ask whether they are behind their input (the reorder window's idle clock, D72): one
   * thread and one consumer per application id, as these are asked up to once a second per task.
   */
  private static final ExecutorService POSITIONS =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "processor-input-positions");
            t.setDaemon(true);
            return t;
          });

  private static final Map<String, KafkaConsumer<byte[], byte[]>> POSITION_READERS =
      new HashMap<>(); // only touched on POSITIONS

  /** Long enough for a slow broker; past it the stream thread fails and its tasks start again. */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  private final Map<String, Object> consumerSettings;

  /**
   * @param clientSettings bootstrap servers and every Kafka client setting of the processor
   */
  InputRecords(Map<String, Object> clientSettings, String clientId) {
    Map<String, Object> m = new HashMap<>(clientSettings);
    m.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // A held offset the input no longer has (its retention deleted it) must fail, not skip.
    m.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    m.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    this.consumerSettings = Map.copyOf(m);
  }

  @Override
  public Map<Long, ConsumerRecord<byte[], byte[]>> read(
      TopicPartition partition, SortedSet<Long> offsets) {
    Map<Long, ConsumerRecord<byte[], byte[]>> found = new HashMap<>();
    long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
    Map<String, Object> settings = settingsFor(partition);
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, partition)) {
      long end = endOf(consumer, partition);
      if (offsets.last() >= end) {
        throw new IllegalStateException(
            "held events at offsets up to "
                + offsets.last()
                + " of "
                + partition
                + ", which ends at "
                + end
                + ": the input changed under the processor's state");
      }
      consumer.seek(partition, offsets.first());
      while (consumer.position(partition) <= offsets.last()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "could not read the held events' records back from "
                  + partition
                  + " within "
                  + READ_TIMEOUT.toSeconds()
                  + " s");
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (offsets.contains(r.offset())) {
            found.put(r.offset(), r);
          }
        }
      }
    } catch (OffsetOutOfRangeException e) {
      throw new IllegalStateException(
          "held events' records are no longer in " + partition + " (its retention?)", e);
    }
    if (found.size() < offsets.size()) {
      SortedSet<Long> missing = new TreeSet<>(offsets);
      missing.removeAll(found.keySet());
      throw new IllegalStateException(
          "held events' records at offsets " + missing + " of " + partition + " are missing");
    }
    return found;
  }

  @Override
  public CompletableFuture<OptionalLong> lastUncommittedAsync(
      TopicPartition partition, String applicationId) {
    return CompletableFuture.supplyAsync(() -> lastUncommitted(partition, applicationId), LOOKUPS);
  }

  @Override
  public CompletableFuture<Boolean> behindAsync(
      TopicPartition partition, String applicationId, long highestRead) {
    return CompletableFuture.supplyAsync(
        () -> {
          KafkaConsumer<byte[], byte[]> consumer =
              POSITION_READERS.computeIfAbsent(
                  applicationId,
                  id -> {
                    Map<String, Object> settings = new HashMap<>(consumerSettings);
                    settings.put(ConsumerConfig.GROUP_ID_CONFIG, id);
                    settings.put(ConsumerConfig.CLIENT_ID_CONFIG, id + "-positions");
                    return new KafkaConsumer<>(
                        settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                  });
          long end = endOf(consumer, partition);
          OffsetAndMetadata committed =
              consumer.committed(Set.of(partition), READ_TIMEOUT).get(partition);
          long reached = Math.max(highestRead + 1, committed == null ? 0 : committed.offset());
          return reached < end;
        },
        POSITIONS);
  }

  /**
   * Reads the group's committed offset (waiting for a transaction that still commits one) and the
   * input's last stable offset; between them, the last record a read-committed consumer returns,
   * looked for backwards from the end in growing steps, as the offsets just below the end may be
   * transaction markers or aborted records.
   */
  @Override
  public OptionalLong lastUncommitted(TopicPartition partition, String applicationId) {
    long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
    Map<String, Object> settings = settingsFor(partition);
    settings.put(ConsumerConfig.GROUP_ID_CONFIG, applicationId);
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(settings, partition)) {
      OffsetAndMetadata committed =
          consumer.committed(Set.of(partition), READ_TIMEOUT).get(partition);
      long from = consumer.beginningOffsets(List.of(partition), READ_TIMEOUT).get(partition);
      if (committed != null) {
        from = Math.max(from, committed.offset()); // below the log start: read from there
      }
      long end = endOf(consumer, partition);
      for (long step = 16; end > from; step *= 2) {
        long start = Math.max(from, end - step);
        long last = lastRecordBetween(consumer, partition, start, end, deadline);
        if (last >= 0) {
          return OptionalLong.of(last);
        }
        if (start == from) {
          break;
        }
      }
      return OptionalLong.empty();
    }
  }

  private static long lastRecordBetween(
      KafkaConsumer<byte[], byte[]> consumer,
      TopicPartition partition,
      long start,
      long end,
      long deadline) {
    long last = -1;
    consumer.seek(partition, start);
    while (consumer.position(partition) < end) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "could not read "
                + partition
                + " from "
                + start
                + " to "
                + end
                + " within "
                + READ_TIMEOUT.toSeconds()
                + " s");
      }
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.offset() < end) {
          last = Math.max(last, r.offset());
        }
      }
    }
    return last;
  }

  /**
   * One client id per partition: stream threads may read at once, and two consumers with one id
   * clash in their metrics registrations.
   */
  private Map<String, Object> settingsFor(TopicPartition partition) {
    Map<String, Object> settings = new HashMap<>(consumerSettings);
    settings.put(
        ConsumerConfig.CLIENT_ID_CONFIG,
        consumerSettings.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-" + partition.partition());
    return settings;
  }

  private static KafkaConsumer<byte[], byte[]> consumer(
      Map<String, Object> settings, TopicPartition partition) {
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    consumer.assign(List.of(partition));
    return consumer;
  }

  /** The last stable offset: a read-committed consumer's end. */
  private static long endOf(KafkaConsumer<byte[], byte[]> consumer, TopicPartition partition) {
    return consumer.endOffsets(List.of(partition), READ_TIMEOUT).get(partition);
  }
}
