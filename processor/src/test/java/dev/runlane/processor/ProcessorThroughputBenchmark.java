package dev.runlane.processor;

import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Processor throughput from a pre-filled topic, with Redis dedup and without it, in the same run.
 *
 * <p>Run: {@code ./mvnw -B -q -pl processor -am test-compile && ./mvnw -B -q -pl processor
 * dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test && java -cp
 * processor/target/test-classes:processor/target/classes:$(cat /tmp/cp.txt)
 * dev.runlane.processor.ProcessorThroughputBenchmark [events]}
 */
public final class ProcessorThroughputBenchmark {
  private ProcessorThroughputBenchmark() {}

  public static void main(String[] args) throws Exception {
    int events = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int runs = Math.max(1, events / 10);
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      EmbeddedRedis redis = EmbeddedRedis.shared();
      TopicNames topics =
          new TopicNames(
              "bench.webhooks", "bench.dlq", "bench.events", "bench.stale", "bench.runs");
      fill(kafka.bootstrapServers(), topics.webhooks(), events, runs);
      run(kafka, redis, topics, true, events, "bench-warmup"); // JIT warm-up, discarded
      double without = run(kafka, redis, topics, false, events, "bench-off");
      double with = run(kafka, redis, topics, true, events, "bench-on");
      System.out.printf(
          "%nprocessor, %d events (20%% duplicates, %d runs), exactly_once_v2, 1 thread:%n"
              + "  without Redis dedup: %,.0f events/s%n"
              + "  with Redis dedup:    %,.0f events/s%n"
              + "  ratio:               %.2fx%n",
          events, runs, without, with, with / without);
    }
    System.exit(0);
  }

  private static void fill(String bootstrap, String topic, int events, int runs) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    // Create the topic with the processor's defaults first.
    try (var admin =
        org.apache.kafka.clients.admin.Admin.create(
            java.util.Map.of("bootstrap.servers", bootstrap))) {
      dev.runlane.common.kafka.TopicEnsurer.ensure(
          admin,
          java.util.List.of(
              dev.runlane.common.kafka.TopicEnsurer.plain(topic, new TopicSettings(12, (short) 1))),
          Duration.ofSeconds(30));
    }
    Random random = new Random(7);
    Instant t0 = Instant.parse("2026-11-29T10:00:00Z");
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      int unique = 0;
      for (int i = 0; i < events; i++) {
        boolean duplicate = unique > 0 && random.nextInt(100) < 20;
        int n = duplicate ? random.nextInt(unique) : unique++;
        String run = "run-" + (n % runs);
        byte[] body = ProcessorHarness.event(run, "req-" + n, t0.plusMillis(n), "run.updated");
        var record = new ProducerRecord<>(topic, run, body);
        record.headers().add("received_at", Long.toString(System.currentTimeMillis()).getBytes());
        producer.send(record);
      }
      producer.flush();
    }
  }

  private static double run(
      EmbeddedKafka kafka,
      EmbeddedRedis redis,
      TopicNames topics,
      boolean dedupOn,
      int events,
      String appId)
      throws Exception {
    ProcessorConfig config =
        new ProcessorConfig(
            kafka.bootstrapServers(),
            redis.uri(),
            0,
            "localhost",
            appId,
            Files.createTempDirectory(appId),
            topics,
            new TopicSettings(12, (short) 1),
            dedupOn,
            "bench:" + appId + ":",
            Duration.ofSeconds(60),
            Duration.ofHours(24),
            Duration.ofMillis(1000),
            RedisFailureMode.DEGRADE,
            Duration.ofSeconds(60),
            1,
            256,
            Duration.ofMillis(20),
            Duration.ofMillis(100),
            Duration.ofSeconds(6),
            "exactly_once_v2");
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    Dedup dedup =
        dedupOn ? new RedisDedup(config.redisDedupSettings(), registry) : Dedup.disabled();
    try (ProcessorApp app = ProcessorApp.start(config, dedup, registry, FaultHook.NONE)) {
      while (app.streams().state() != org.apache.kafka.streams.KafkaStreams.State.RUNNING) {
        LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
      }
      long start = System.nanoTime();
      while (decided(registry) < events) {
        LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        if (System.nanoTime() - start > Duration.ofMinutes(10).toNanos()) {
          throw new IllegalStateException("not done after 10 minutes: " + decided(registry));
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      long roundTrips =
          registry.find("runlane.processor.redis.latency").timers().stream()
              .mapToLong(Timer::count)
              .sum();
      System.out.printf(
          "%s: %d events in %.1f s (from RUNNING), %d Redis round trips (1/%.0f events)%n",
          appId, events, seconds, roundTrips, roundTrips == 0 ? 0.0 : (double) events / roundTrips);
      return events / seconds;
    }
  }

  private static double decided(PrometheusMeterRegistry registry) {
    return registry.find("runlane.processor.events").counters().stream()
        .filter(c -> !"waiting".equals(c.getId().getTag("outcome")))
        .mapToDouble(Counter::count)
        .sum();
  }
}
