package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.ingress.IngressApp;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The real ingress and processor on the e2e topics, in this JVM, processor RUNNING: what the e2e
 * and soak stages send their webhooks through.
 */
record Pipeline(
    TopicNames topics,
    IngressApp ingress,
    ProcessorApp processor,
    PrometheusMeterRegistry processorRegistry,
    PrometheusMeterRegistry ingressRegistry)
    implements AutoCloseable {

  /**
   * Buckets for the processor's receive -> read and receive -> apply timers, so that a soak
   * window's tail can be read from the difference of two snapshots (the timer's own percentiles
   * decay over minutes).
   */
  static final MeterFilter RECEIVE_LATENCY_BUCKETS =
      new MeterFilter() {
        @Override
        public DistributionStatisticConfig configure(
            Meter.Id id, DistributionStatisticConfig config) {
          return id.getName().equals(ProcessorMetrics.END_TO_END)
                  || id.getName().equals(ProcessorMetrics.RECEIVE_TO_READ)
              ? DistributionStatisticConfig.builder()
                  .percentilesHistogram(true)
                  .minimumExpectedValue((double) Duration.ofMillis(1).toNanos())
                  .maximumExpectedValue((double) Duration.ofMinutes(1).toNanos())
                  .build()
                  .merge(config)
              : config;
        }
      };

  static Pipeline start(BenchContext ctx) throws Exception {
    String bootstrap = ctx.bootstrap();
    TopicNames topics =
        new TopicNames("e2e.webhooks", "e2e.dlq", "e2e.events", "e2e.stale", "e2e.runs");
    ctx.createTopics(topics.webhooks(), topics.dlq(), topics.events(), topics.stale());
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("SUME_SIGNING_SECRETS", Webhooks.SECRET.reveal());
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("TOPIC_WEBHOOKS", topics.webhooks());
    env.put("TOPIC_DLQ", topics.dlq());
    env.put("TOPIC_EVENTS", topics.events());
    env.put("TOPIC_STALE", topics.stale());
    env.put("TOPIC_RUNS", topics.runs());
    BenchContext.passThrough(env, Services.INGRESS_TUNING);
    IngressConfig ingressConfig = IngressConfig.fromEnv(env).withPorts(0, 0);
    ProcessorConfig processorConfig =
        Services.processorConfig(bootstrap, ctx.redis(), "bench-e2e", topics, true);
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    registry.config().meterFilter(RECEIVE_LATENCY_BUCKETS);
    PrometheusMeterRegistry ingressRegistry = Metrics.newRegistry("ingress");
    IngressApp ingress = IngressApp.start(ingressConfig, ingressRegistry);
    ProcessorApp processor;
    RedisDedup dedup = null;
    try {
      dedup = new RedisDedup(processorConfig.redisDedupSettings(), registry);
      processor = ProcessorApp.start(processorConfig, dedup, registry, FaultHook.NONE);
    } catch (RuntimeException | Error e) {
      try {
        if (dedup != null) {
          dedup.close(); // owned by the processor only once it started
        }
      } finally {
        ingress.close();
        ingressRegistry.close();
        registry.close();
      }
      throw e;
    }
    Pipeline pipeline = new Pipeline(topics, ingress, processor, registry, ingressRegistry);
    try {
      processor.awaitRunning(Duration.ofSeconds(60));
    } catch (RuntimeException | Error e) {
      pipeline.close();
      throw e;
    }
    return pipeline;
  }

  /** The webhooks the e2e and soak stages send: the ingress stage's, from 4 seeds' worth of ids. */
  static Webhooks webhooks() {
    return new Webhooks(4, Webhooks.HTTP_RUNS, Webhooks.HTTP_BODY_BYTES);
  }

  /** The registries last: each holds a JVM GC listener until closed (Metrics.newRegistry). */
  @Override
  public void close() {
    try {
      processor.close();
    } finally {
      try {
        ingress.close();
      } finally {
        processorRegistry.close();
        ingressRegistry.close();
      }
    }
  }
}
