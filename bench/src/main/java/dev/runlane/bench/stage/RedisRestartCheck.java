package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.load.RateSchedule;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.ProcessorMeters;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import redis.clients.jedis.Jedis;

/**
 * Part of stage 5: an in-process processor (Redis dedup, exactly_once_v2) under a constant input
 * rate with duplicates, while its Redis (owned, no persistence) is stopped, kept down, and started
 * again empty. Reports how long the processor decided on the run store alone, how long after Redis
 * answered again the claims resumed, the input rate before and after, and whether any request_id
 * reached the events topic twice.
 */
final class RedisRestartCheck {
  static final String STAGE = RecoveryStage.STAGE;
  static final String APP_ID = "bench-redis-restart";
  static final int RATE = 1000;
  static final int DUPLICATE_PERCENT = 20;
  static final int RUNS = 10_000;

  private final BenchContext ctx;

  RedisRestartCheck(BenchContext ctx) {
    this.ctx = ctx;
  }

  void run() throws Exception {
    Results res = ctx.results;
    String bootstrap = ctx.bootstrap();
    String prefix = "rr.";
    TopicNames topics =
        new TopicNames(
            prefix + "webhooks",
            prefix + "dlq",
            prefix + "events",
            prefix + "stale",
            prefix + "runs");
    ctx.createTopics(topics.webhooks(), topics.dlq(), topics.events(), topics.stale());
    Duration down = Duration.ofSeconds(ctx.quick ? 3 : 5);
    Duration window = Duration.ofSeconds(ctx.quick ? 5 : 10);

    Set<String> acked = ConcurrentHashMap.newKeySet();
    AtomicLong notAcked = new AtomicLong();
    AtomicLong duplicatesSent = new AtomicLong();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    AtomicBoolean stopProducer = new AtomicBoolean();
    AtomicBoolean stopReader = new AtomicBoolean();
    Thread producer =
        new Thread(
            () ->
                produce(
                    bootstrap, topics.webhooks(), stopProducer, acked, notAcked, duplicatesSent),
            "rr-producer");
    Thread reader =
        new Thread(() -> read(bootstrap, topics.events(), stopReader, seen), "rr-reader");

    try (EmbeddedRedis redis = EmbeddedRedis.startOwned()) {
      ProcessorConfig config = Services.processorConfig(bootstrap, redis, APP_ID, topics, true);
      PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
      RedisDedup dedup = new RedisDedup(config.redisDedupSettings(), registry);
      try (ProcessorApp app = Services.startProcessor(config, dedup, registry)) {
        app.awaitRunning(Services.RUNNING_TIMEOUT);
        reader.start();
        producer.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (seen.isEmpty()) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("no output within 60 s");
          }
          LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
        // Warm-up, then the "before" window.
        LockSupport.parkNanos(window.toNanos());
        double[] before = rates(registry, seen, window);

        // Availability sampler: the gauge every 5 ms.
        AtomicLong firstZero = new AtomicLong(-1);
        AtomicLong lastZero = new AtomicLong(-1);
        AtomicLong upAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong resumedAt = new AtomicLong(-1);
        AtomicBoolean stopSampler = new AtomicBoolean();
        Thread sampler =
            new Thread(
                () -> {
                  while (!stopSampler.get()) {
                    long now = System.nanoTime();
                    if (available(registry) == 0) {
                      firstZero.compareAndSet(-1, now);
                      lastZero.set(now);
                    } else if (firstZero.get() >= 0 && now > upAt.get()) {
                      resumedAt.compareAndSet(-1, now);
                    }
                    LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
                  }
                },
                "rr-sampler");
        sampler.start();
        double degradedBefore = degraded(registry);
        long keysBefore = dbSize(redis);
        long stopNanos = System.nanoTime();
        redis.stop();
        LockSupport.parkNanos(down.toNanos() - (System.nanoTime() - stopNanos));
        redis.restart(); // not running: starts it on the same port, empty
        upAt.set(System.nanoTime());
        deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (resumedAt.get() < 0 && System.nanoTime() < deadline) {
          LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
        double degradedDecisions = degraded(registry) - degradedBefore;
        LockSupport.parkNanos(Duration.ofSeconds(1).toNanos()); // let the degraded backlog go
        double[] after = rates(registry, seen, window);
        long keysAfter = dbSize(redis);
        stopSampler.set(true);
        sampler.join(5_000);

        stopProducer.set(true);
        producer.join(30_000);
        long wait = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < wait && !seen.keySet().containsAll(acked)) {
          LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
        LockSupport.parkNanos(Duration.ofSeconds(1).toNanos()); // late doubles would show here
        long lost = acked.stream().filter(id -> !seen.containsKey(id)).count();
        long doubled = seen.values().stream().filter(n -> n > 1).count();

        double detect = firstZero.get() < 0 ? Double.NaN : (firstZero.get() - stopNanos) / 1e9;
        double degradedSeconds = firstZero.get() < 0 ? 0 : (lastZero.get() - firstZero.get()) / 1e9;
        double resume = resumedAt.get() < 0 ? Double.NaN : (resumedAt.get() - upAt.get()) / 1e9;
        double downSeconds = (upAt.get() - stopNanos) / 1e9;
        System.out.printf(
            "  Redis down %.1f s: degraded after %.3f s, for %.1f s; claims resumed %.3f s after"
                + " PING; %,.0f degraded decisions; input %,.0f/s before, %,.0f/s after%n",
            downSeconds, detect, degradedSeconds, resume, degradedDecisions, before[0], after[0]);

        res.add(
            Row.figure(
                STAGE,
                String.format(
                    "Redis restart: deciding on run store alone (Redis down %.1f s)", downSeconds),
                degradedSeconds,
                "s"));
        res.add(
            Row.figure(
                STAGE,
                "Redis restart: events decided on run store alone",
                degradedDecisions,
                "events"));
        res.add(Row.figure(STAGE, "Redis restart: answers PING -> claims resumed", resume, "s"));
        res.add(
            Row.figure(STAGE, "Redis restart: input events/s decided, after", after[0], "events/s")
                .against("same, before the restart", before[0], after[0] / before[0]));
        res.add(
            Row.figure(
                    STAGE,
                    "Redis restart: acked request_ids lost / applied twice",
                    lost + doubled,
                    "records")
                .withTarget("0", lost == 0 && doubled == 0));
        long roundTrips = ProcessorMeters.roundTrips(registry);
        res.note(
            STAGE,
            String.format(
                "Redis restart: in-process ProcessorApp (Redis dedup, exactly_once_v2, failure"
                    + " mode DEGRADE, retry backoff 1 s), %d/s input with %d%% re-sent duplicates"
                    + " over %,d runs; owned redis-server without persistence stopped, kept down"
                    + " %.1f s, started empty on the same port; gauge %s first 0 after %.3f s;"
                    + " %,d acked unique request_ids (%,d sends failed), %,d duplicates sent; %,d"
                    + " lost, %,d applied twice (read_committed reader of %s, request_id header);"
                    + " applied events/s %,.0f before, %,.0f after; Redis keys %,d before the"
                    + " stop, %,d %.0f s after the restart; %,d Redis round trips in all",
                RATE,
                DUPLICATE_PERCENT,
                RUNS,
                downSeconds,
                "runlane.processor.redis.available",
                detect,
                acked.size(),
                notAcked.get(),
                duplicatesSent.get(),
                lost,
                doubled,
                topics.events(),
                before[1],
                after[1],
                keysBefore,
                keysAfter,
                window.toSeconds() + 1.0,
                roundTrips));
      } finally {
        registry.close(); // its JVM GC listener would outlive the check
      }
    } finally {
      stopProducer.set(true);
      stopReader.set(true);
      if (producer.isAlive()) {
        producer.join(10_000);
      }
      if (reader.isAlive()) {
        reader.join(10_000);
      }
    }
  }

  /** {input events decided per s, events applied (seen in events) per s} over {@code window}. */
  private static double[] rates(
      PrometheusMeterRegistry registry, Map<String, Integer> seen, Duration window) {
    double d0 = ProcessorMeters.decided(registry);
    long s0 = seen.size();
    long t0 = System.nanoTime();
    LockSupport.parkNanos(window.toNanos());
    double seconds = (System.nanoTime() - t0) / 1e9;
    return new double[] {
      (ProcessorMeters.decided(registry) - d0) / seconds, (seen.size() - s0) / seconds
    };
  }

  private static double degraded(PrometheusMeterRegistry registry) {
    return registry.find("runlane.processor.degraded.decisions").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  private static double available(PrometheusMeterRegistry registry) {
    Gauge g = registry.find("runlane.processor.redis.available").gauge();
    return g == null ? Double.NaN : g.value();
  }

  private static long dbSize(EmbeddedRedis redis) {
    try (Jedis j = new Jedis(redis.host(), redis.port())) {
      return j.dbSize();
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private static void read(
      String bootstrap, String events, AtomicBoolean stop, Map<String, Integer> seen) {
    Map<String, Object> c = KafkaClients.readCommitted(bootstrap);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      var parts =
          consumer.partitionsFor(events).stream()
              .map(p -> new TopicPartition(events, p.partition()))
              .toList();
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      while (!stop.get()) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
          String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
          if (id != null) {
            seen.merge(id, 1, Integer::sum);
          }
        }
      }
    }
  }

  /**
   * Constant rate; {@code DUPLICATE_PERCENT} of the sends re-send a recent record (same key, body
   * and request_id), so duplicates cross the Redis restart: sent before it, again after.
   */
  private static void produce(
      String bootstrap,
      String topic,
      AtomicBoolean stop,
      Set<String> acked,
      AtomicLong notAcked,
      AtomicLong duplicatesSent) {
    Map<String, Object> p = KafkaClients.live(bootstrap);
    SplittableRandom random = new SplittableRandom(31);
    long idHigh = random.nextLong();
    Instant t0 = Instant.now();
    int ringSize = 5 * RATE; // duplicates of up to ~5 s ago
    List<ProducerRecord<String, byte[]>> ring =
        new ArrayList<>(Collections.nCopies(ringSize, null));
    long unique = 0;
    RateSchedule schedule = new RateSchedule(System.nanoTime(), RATE);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      for (long i = 0; !stop.get(); i++) {
        schedule.parkUntilDue(i);
        if (unique > 0 && random.nextInt(100) < DUPLICATE_PERCENT) {
          ProducerRecord<String, byte[]> old =
              ring.get((int) (random.nextLong(Math.min(unique, ringSize)) % ringSize));
          ProducerRecord<String, byte[]> again =
              new ProducerRecord<>(topic, old.key(), old.value());
          old.headers().forEach(h -> again.headers().add(h));
          producer.send(again);
          duplicatesSent.incrementAndGet();
          continue;
        }
        long n = unique++;
        String id = new UUID(idHigh, n).toString();
        String run = "run-" + random.nextInt(RUNS);
        ProducerRecord<String, byte[]> record =
            Webhooks.record(topic, id, run, t0.plusMillis(n), 512, random);
        ring.set((int) (n % ringSize), record);
        producer.send(record, KafkaClients.countAck(id, acked, notAcked));
      }
      producer.flush();
    }
  }
}
