package dev.runlane.processor.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.StateTopics;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a replaying generation has re-derived each input partition past where the generation
 * before it stopped, so that its committed run states are no older than the ones that generation
 * answered (D44, D69). Until then {@code /runs/{id}} answers 503 "re-deriving" for the partition's
 * runs instead of an older state or a 404.
 *
 * <p>A partition has caught up once, read from the broker: the generation's committed offset is at
 * least the replay's {@code live_from} (the old generation's committed offset), and neither its
 * pending nor its held changelog (read committed) keeps an event below it, which would be read but
 * not yet applied. The check runs once a second on a thread of its own and opens a partition one
 * check after it first found it caught up: the stores' committed view, which the query reads,
 * follows the broker's commit on the stream thread, right after it. An open partition stays open:
 * the offset only grows and events below it never park again.
 */
public final class ReplayCatchUp implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ReplayCatchUp.class);

  /** How often the broker is asked, while a partition is still re-deriving. */
  static final Duration CHECK_EVERY = Duration.ofSeconds(1);

  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  private final String applicationId;
  private final String input;
  private final Map<Integer, Long> liveFrom;
  private final Map<String, Object> clientSettings;
  private final Set<Integer> open = ConcurrentHashMap.newKeySet();
  private final Set<Integer> seenCaughtUp = new HashSet<>(); // the check thread's
  private final ScheduledExecutorService executor;
  private Admin admin; // the check thread's; null until the first check, and once all are open
  private boolean failing; // the check thread's

  private ReplayCatchUp(Generation generation, Map<String, Object> clientSettings) {
    this.applicationId = generation.applicationId();
    this.input = generation.input();
    this.liveFrom = generation.replay().liveFrom();
    this.clientSettings = new HashMap<>(clientSettings);
    liveFrom.forEach(
        (p, offset) -> {
          if (offset == 0) {
            open.add(p); // the old generation committed nothing here: nothing to be older than
          }
        });
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "processor-replay-catch-up");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts checking a replaying generation; null for one that replays nothing.
   *
   * @param clientSettings bootstrap servers and every Kafka client setting of the processor
   */
  public static ReplayCatchUp start(Generation generation, Map<String, Object> clientSettings) {
    if (generation.replay() == null) {
      return null;
    }
    ReplayCatchUp catchUp = new ReplayCatchUp(generation, clientSettings);
    if (!catchUp.allOpen()) {
      catchUp.executor.scheduleWithFixedDelay(
          catchUp::check, 0, CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }
    return catchUp;
  }

  /** Whether {@code partition} may still answer older states than the generation before. */
  public boolean rederiving(int partition) {
    return liveFrom.containsKey(partition) && !open.contains(partition);
  }

  /** Whether some partition may still answer older states than the generation before. */
  public boolean rederiving() {
    return !allOpen();
  }

  private boolean allOpen() {
    return open.containsAll(liveFrom.keySet());
  }

  private void check() {
    try {
      if (admin == null) {
        admin = Admin.create(clientSettings);
      }
      Map<Integer, Long> committed = committed();
      for (Map.Entry<Integer, Long> e : liveFrom.entrySet()) {
        int p = e.getKey();
        if (open.contains(p) || committed.getOrDefault(p, 0L) < e.getValue()) {
          continue;
        }
        if (!nothingWaitsBelow(p, e.getValue())) {
          seenCaughtUp.remove(p);
        } else if (!seenCaughtUp.add(p)) {
          open.add(p);
          log.info(
              "{} re-derived input partition {} past offset {}: /runs answers its runs again",
              applicationId,
              p,
              e.getValue());
        }
      }
      if (failing) {
        log.info("{}: checking how far the replay re-derived again", applicationId);
        failing = false;
      }
      if (allOpen()) {
        closeClients();
        executor.shutdown();
      }
    } catch (RuntimeException e) {
      // /runs keeps answering 503 "re-deriving" meanwhile: late, never older.
      if (!failing) {
        log.info(
            "{}: could not check how far the replay re-derived (retrying): {}",
            applicationId,
            e.toString());
      }
      failing = true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The generation's committed offset of each input partition. */
  private Map<Integer, Long> committed() throws InterruptedException {
    try {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin
              .listConsumerGroupOffsets(applicationId, new ListConsumerGroupOffsetsOptions())
              .partitionsToOffsetAndMetadata()
              .get(READ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      Map<Integer, Long> byPartition = new HashMap<>();
      offsets.forEach(
          (tp, om) -> {
            if (om != null && tp.topic().equals(input)) {
              byPartition.put(tp.partition(), om.offset());
            }
          });
      return byPartition;
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("reading the committed offsets of " + applicationId, e);
    }
  }

  /**
   * Whether neither the pending nor the held changelog of {@code partition} keeps, as committed, an
   * event of an input offset below {@code below}: read, not yet applied to the run store.
   */
  private boolean nothingWaitsBelow(int partition, long below) {
    Map<String, Object> m = new HashMap<>(clientSettings);
    m.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    m.put(ConsumerConfig.CLIENT_ID_CONFIG, applicationId + "-catch-up");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(m, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      for (String changelog :
          List.of(
              StateTopics.pendingChangelog(applicationId),
              StateTopics.heldChangelog(applicationId))) {
        if (!waiting(consumer, new TopicPartition(changelog, partition), below).isEmpty()) {
          return false;
        }
      }
      return true;
    }
  }

  /** The input offsets below {@code below} that {@code changelog} keeps, as committed. */
  private static Set<Long> waiting(
      KafkaConsumer<byte[], byte[]> consumer, TopicPartition changelog, long below) {
    consumer.assign(List.of(changelog));
    consumer.seekToBeginning(List.of(changelog));
    // Under read_committed, the end is the last stable offset: what the last commit wrote.
    long end = consumer.endOffsets(List.of(changelog), READ_TIMEOUT).getOrDefault(changelog, 0L);
    Set<Long> waiting = new HashSet<>();
    long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
    while (consumer.position(changelog, READ_TIMEOUT) < end) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("reading " + changelog + " took over " + READ_TIMEOUT);
      }
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.key() == null || r.key().length != Long.BYTES) {
          continue;
        }
        long offset = ByteBuffer.wrap(r.key()).getLong();
        if (offset >= below) {
          continue;
        }
        if (r.value() == null) {
          waiting.remove(offset);
        } else {
          waiting.add(offset);
        }
      }
    }
    return waiting;
  }

  private void closeClients() {
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
      admin = null;
    }
  }

  /** Stops checking; the generation stopped. */
  @Override
  public void close() {
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        log.info("{}: the replay's catch-up check did not stop within 10 s", applicationId);
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    closeClients();
  }
}
