package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.Fill;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.Offsets;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.tools.Steps;
import dev.runlane.tools.ToolsConfig;
import dev.runlane.tools.generation.GrowProcedure;
import dev.runlane.tools.generation.Pipeline;
import dev.runlane.tools.generation.ReplayProcedure;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Stage 7: generations (D35). N events of N runs are applied live (Redis dedup on): the baseline
 * rate. Then {@code replay rebuild} re-derives them in a new generation: its rate next to the live
 * one. Then, with N runs in state and a trickle of new events following the control topic as the
 * ingress does, {@code partitions grow --to 24}: its processing pause (an event written to the new
 * input waits from the ingress moving to the new generation's first commit), with the seed copy.
 */
public final class GenerationsStage extends Stage {
  static final String STAGE = "generations";
  static final String APP_ID = "bench-generations";

  /** The pause the grow is held to, with every ingress acknowledging its move (D71). */
  static final double TARGET_PAUSE_SECONDS = 10;

  public GenerationsStage() {
    super(STAGE, Services.PROCESSOR_TUNING);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    int runs = ctx.volume();
    String prefix = "generations.";
    String input = prefix + "webhooks";
    ctx.createTopics(input);
    Fill.onePerRun(ctx.bootstrap(), input, "run-", runs);
    TopicNames topics =
        new TopicNames(input, prefix + "dlq", prefix + "events", prefix + "stale", prefix + "runs");
    ProcessorConfig config =
        Services.processorConfig(ctx.bootstrap(), ctx.redis(), APP_ID, topics, true);
    ToolsConfig tools =
        new ToolsConfig(
            ctx.bootstrap(),
            APP_ID,
            topics,
            new TopicSettings(BenchContext.PARTITIONS, (short) 1),
            ControlTopic.DEFAULT_NAME,
            KafkaClientSettings.none());
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    ProcessorApp app =
        Services.startProcessor(
            config, new RedisDedup(config.redisDedupSettings(), registry), registry);
    try (Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, ctx.bootstrap()));
        Pipeline pipeline = new Pipeline(tools)) {
      long start = System.nanoTime();
      Offsets.awaitCommitted(admin, APP_ID, input, Duration.ofMinutes(20));
      double liveSeconds = (System.nanoTime() - start) / 1e9;
      double liveRate = runs / liveSeconds;
      System.out.printf(
          "  live: %,d events applied in %.1f s = %,.0f/s%n", runs, liveSeconds, liveRate);

      ReplayProcedure.Result rebuild =
          new ReplayProcedure(pipeline, new Steps(System.out), Clock.systemUTC())
              .run(new ReplayProcedure.Options(null, false, Duration.ofMinutes(20), true));
      double rebuildRate = rebuild.rederived() / rebuild.seconds();
      res.add(
          Row.figure(
                  STAGE,
                  String.format("replay rebuild: events re-derived per second (%,d runs)", runs),
                  rebuildRate,
                  "events/s")
              .against("live apply, same processor and input", liveRate, rebuildRate / liveRate));

      GrowProcedure.Result grow;
      try (Trickle trickle = new Trickle(ctx.bootstrap(), input)) {
        trickle.awaitStarted();
        grow =
            new GrowProcedure(pipeline, new Steps(System.out), Clock.systemUTC())
                .run(
                    new GrowProcedure.Options(
                        BenchContext.PARTITIONS * 2, false, Duration.ZERO, Duration.ofMinutes(20)));
        System.out.printf("  trickle: %,d events written during the grow%n", trickle.sent());
      }
      res.add(
          Row.figure(
                  STAGE,
                  String.format(
                      "partitions grow 12 -> 24: processing pause (%,d runs in state)", runs),
                  grow.pause().toMillis() / 1000.0,
                  "s")
              .against(
                  "target",
                  TARGET_PAUSE_SECONDS,
                  grow.pause().toMillis() / 1000.0 / TARGET_PAUSE_SECONDS));
      res.note(
          STAGE,
          String.format(
              "grow: %,d run states seeded into the new generation's changelog; the pause is the"
                  + " wait for every ingress's acknowledgement (none here: the trickle follows the"
                  + " control topic every 20 ms), the old generation's drain and stop, the seed"
                  + " copy, and the new generation's restore and first commit (D71)",
              grow.seeds()));
    } finally {
      app.close();
      registry.close();
    }
  }

  /**
   * Writes one event of a new run every 20 ms to the input the control topic names for the ingress,
   * as an ingress following it would.
   */
  private static final class Trickle implements AutoCloseable {
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong sent = new AtomicLong();
    private final Thread thread;

    Trickle(String bootstrap, String baseInput) {
      thread =
          new Thread(
              () -> {
                try (KafkaProducer<String, byte[]> producer =
                        new KafkaProducer<>(
                            KafkaClients.fill(bootstrap),
                            new StringSerializer(),
                            new ByteArraySerializer());
                    ControlTopic.Reader control =
                        new ControlTopic.Reader(
                            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                            ControlTopic.DEFAULT_NAME,
                            baseInput)) {
                  SplittableRandom random = new SplittableRandom(7);
                  while (running.get()) {
                    String topic =
                        control
                            .latest(Duration.ofSeconds(10))
                            .map(Generation::ingressInput)
                            .orElse(baseInput);
                    long i = sent.get();
                    producer.send(
                        Webhooks.record(
                            topic,
                            "probe-" + i,
                            "probe-run-" + i,
                            Instant.now(),
                            Fill.BODY_BYTES,
                            random));
                    sent.incrementAndGet();
                    LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                  }
                }
              },
              "generations-trickle");
      thread.setDaemon(true);
      thread.start();
    }

    void awaitStarted() {
      while (sent.get() == 0) {
        LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
      }
    }

    long sent() {
      return sent.get();
    }

    @Override
    public void close() {
      running.set(false);
      try {
        thread.join(30_000);
      } catch (InterruptedException e) {
        // Kept for the stage's thread to see: the trickle has been told to stop either way.
        Thread.currentThread().interrupt();
      }
    }
  }
}
