package dev.runlane.bench.stage;

import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.load.RateSchedule;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.common.kafka.RecordHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A live load on the input and a committed reader of the events topic that remembers, per output,
 * the input partition its record was written to, when it was written and when it was seen: what the
 * {@code restart} stage measures a deploy's pause by.
 */
final class LiveOutputs implements AutoCloseable {
  /** One live-load output: its input partition, when its input was sent, when it was seen. */
  private record Seen(int partition, long sentNanos, long seenNanos) {}

  private final String bootstrap;
  private final String input;
  private final String events;
  private final Map<String, Long> sentAt = new ConcurrentHashMap<>();
  private final Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
  private final Set<String> acked = ConcurrentHashMap.newKeySet();
  private final AtomicLong notAcked = new AtomicLong();
  private final Map<String, Integer> seenCount = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean stopLoad = new AtomicBoolean();
  private final AtomicBoolean stopReader = new AtomicBoolean();
  private final CountDownLatch positioned = new CountDownLatch(1);
  private Thread producer;
  private Thread reader;

  LiveOutputs(String bootstrap, String input, String events) {
    this.bootstrap = bootstrap;
    this.input = input;
    this.events = events;
  }

  /** Starts reading the events topic from its end; returns once positioned. */
  void startReader() throws InterruptedException {
    reader = new Thread(this::read, "restart-reader");
    reader.start();
    if (!positioned.await(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the events reader did not get its positions in 30 s");
    }
  }

  void startLoad(int rate) {
    producer = new Thread(() -> produce(rate), "restart-producer");
    producer.start();
  }

  void stopLoad() throws InterruptedException {
    stopLoad.set(true);
    producer.join(30_000);
  }

  /** Waits until any live output was seen. */
  void awaitAny(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (seen.isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no output of the live load within " + timeout);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
  }

  /**
   * When the first output of an input on {@code partitions} sent after {@code sentAfter} was seen,
   * or -1 if none was yet.
   */
  long firstAfter(Set<Integer> partitions, long sentAfter) {
    long first = -1;
    for (Seen s : seen) {
      if (partitions.contains(s.partition())
          && s.sentNanos() > sentAfter
          && (first < 0 || s.seenNanos() < first)) {
        first = s.seenNanos();
      }
    }
    return first;
  }

  /** The longest gap, in seconds, between outputs seen on one of {@code partitions} since. */
  double longestGap(Set<Integer> partitions, long since) {
    double longest = 0;
    for (int p : partitions) {
      List<Long> times = new ArrayList<>();
      for (Seen s : seen) {
        if (s.partition() == p && s.seenNanos() >= since) {
          times.add(s.seenNanos());
        }
      }
      times.sort(null);
      for (int i = 1; i < times.size(); i++) {
        longest = Math.max(longest, (times.get(i) - times.get(i - 1)) / 1e9);
      }
    }
    return longest;
  }

  /** Waits for every acked input's output; returns {lost, applied twice}. */
  long[] check(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline && !seenCount.keySet().containsAll(acked)) {
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
    long lost = acked.stream().filter(id -> !seenCount.containsKey(id)).count();
    long twice = seenCount.values().stream().filter(n -> n > 1).count();
    return new long[] {lost, twice};
  }

  int acked() {
    return acked.size();
  }

  long notAcked() {
    return notAcked.get();
  }

  private void read() {
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            KafkaClients.readCommitted(bootstrap),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      List<TopicPartition> parts =
          consumer.partitionsFor(events).stream()
              .map(p -> new TopicPartition(events, p.partition()))
              .toList();
      consumer.assign(parts);
      consumer.seekToEnd(parts);
      parts.forEach(consumer::position);
      positioned.countDown();
      while (!stopReader.get()) {
        var records = consumer.poll(Duration.ofMillis(20));
        long now = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> r : records) {
          String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
          Long sent = id == null ? null : sentAt.get(id);
          Integer partition = id == null ? null : partitionOf.get(id);
          if (sent == null || partition == null) {
            continue; // not the live load's
          }
          seenCount.merge(id, 1, Integer::sum);
          seen.add(new Seen(partition, sent, now));
        }
      }
    }
  }

  private void produce(int rate) {
    SplittableRandom random = new SplittableRandom(40);
    long idHigh = random.nextLong();
    Instant t0 = Instant.now();
    RateSchedule schedule = new RateSchedule(System.nanoTime(), rate);
    try (KafkaProducer<String, byte[]> p =
        new KafkaProducer<>(
            KafkaClients.live(bootstrap), new StringSerializer(), new ByteArraySerializer())) {
      int partitions = p.partitionsFor(input).size();
      for (long i = 0; !stopLoad.get(); i++) {
        schedule.parkUntilDue(i);
        String id = new UUID(idHigh, i).toString();
        String run = "run-" + random.nextInt(300);
        ProducerRecord<String, byte[]> record =
            Webhooks.record(input, id, run, t0.plusMillis(i), 512, random);
        // The producer's own choice for a keyed record, known before the processor can read it.
        partitionOf.put(
            id,
            BuiltInPartitioner.partitionForKey(run.getBytes(StandardCharsets.UTF_8), partitions));
        sentAt.put(id, System.nanoTime());
        p.send(record, KafkaClients.countAck(id, acked, notAcked));
      }
      p.flush();
    }
  }

  @Override
  public void close() {
    stopLoad.set(true);
    stopReader.set(true);
    try {
      if (producer != null) {
        producer.join(10_000);
      }
      if (reader != null) {
        reader.join(10_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
