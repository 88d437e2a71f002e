package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.BareHarness;
import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.JitWarmup;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.ingress.IngressApp;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.ingress.publish.ProducerSettings;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;

/**
 * Stage 1: the ingress under an open-loop load, next to the bare produce-and-wait harness (same
 * server framework, loops, producer settings, records and client) and the raw async producer.
 */
public final class IngressStage extends Stage {
  static final String STAGE = "ingress";
  static final double P99_LIMIT_MS = 10.0;

  private static final int RING = 16_384;
  private static final int CONNECTIONS = 256;

  public IngressStage() {
    super(STAGE, Services.INGRESS_TUNING);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    String bootstrap = ctx.bootstrap();
    ctx.createTopics("bench.ingress.webhooks", "bench.ingress.dlq", "bench.bare", "bench.raw");
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("SUME_SIGNING_SECRETS", Webhooks.SECRET.reveal());
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("TOPIC_WEBHOOKS", "bench.ingress.webhooks");
    env.put("TOPIC_DLQ", "bench.ingress.dlq");
    env.put("TOPIC_PARTITIONS", Integer.toString(BenchContext.PARTITIONS));
    BenchContext.passThrough(env, Services.INGRESS_TUNING);
    IngressConfig config = IngressConfig.fromEnv(env).withPorts(0, 0);
    Map<String, Object> producerConfig =
        ProducerSettings.producerConfig(
            bootstrap,
            config.ackTimeout(),
            config.producerMaxBlock(),
            config.producerLinger(),
            config.producerCompression(),
            config.maxBodyBytes(),
            "bench-bare");
    Duration warmup = Duration.ofSeconds(ctx.quick ? 2 : 4);
    Duration measure = Duration.ofSeconds(ctx.quick ? 5 : 10);
    Webhooks webhooks = new Webhooks(1, Webhooks.HTTP_RUNS, Webhooks.HTTP_BODY_BYTES);
    PrometheusMeterRegistry registry = Metrics.newRegistry("ingress");
    try (IngressApp ingress = IngressApp.start(config, registry);
        BareHarness bare = new BareHarness(producerConfig, "bench.bare", config.eventLoops());
        OpenLoopLoad load = new OpenLoopLoad(CONNECTIONS, 1)) {
      res.note(
          STAGE,
          String.format(
              "%d B signed bodies (random base64 payload, incompressible for lz4), %d run ids,"
                  + " %d event loops on each server, client: Vert.x, 1 event loop, %d connections;"
                  + " warm-up %d s discarded, %d s measured per step; broker, servers and load"
                  + " generator share %d cores",
              webhooks.next().body().length,
              Webhooks.HTTP_RUNS,
              config.eventLoops(),
              CONNECTIONS,
              warmup.toSeconds(),
              measure.toSeconds(),
              Runtime.getRuntime().availableProcessors()));
      // JIT warm-up of both paths, discarded, until the compiler has settled.
      Duration warmWindow = Duration.ofSeconds(5);
      res.note(
          STAGE,
          JitWarmup.untilSettled(
              Duration.ofSeconds(ctx.quick ? 45 : 90),
              2,
              "5 s windows at 3,000/s to each server in turn",
              () -> {
                for (int port : new int[] {bare.port(), ingress.port()}) {
                  Webhooks.Signed[] ring = webhooks.batch(RING);
                  load.run(
                      port, 3000, Duration.ZERO, warmWindow, i -> ring[(int) (i % RING)], null);
                }
              }));

      // Fixed rates: 1k/s and 5k/s.
      // Which server goes first alternates, here and in the step search, so that whatever
      // drifts over a run (the broker's logs growing, a late compile) does not favour one.
      boolean bareFirst = true;
      for (int rate : new int[] {1000, 5000}) {
        OpenLoopLoad.Result b;
        OpenLoopLoad.Result i;
        if (bareFirst) {
          b = step(load, bare.port(), rate, warmup, measure, webhooks, "bare");
          i = step(load, ingress.port(), rate, warmup, measure, webhooks, "ingress");
        } else {
          i = step(load, ingress.port(), rate, warmup, measure, webhooks, "ingress");
          b = step(load, bare.port(), rate, warmup, measure, webhooks, "bare");
        }
        bareFirst = !bareFirst;
        String at = String.format("at %,d/s", rate);
        res.add(row("p50 " + at, i.latency().p50(), b.latency().p50()));
        res.add(
            row("p99 " + at, i.latency().p99(), b.latency().p99())
                .withTarget("< 10 ms", i.latency().p99() < P99_LIMIT_MS));
        res.add(row("p99.9 " + at, i.latency().p999(), b.latency().p999()));
        if (i.cpuMillis() > 0 && b.cpuMillis() > 0) {
          res.add(
              Row.figure(
                      STAGE,
                      "process CPU per request " + at + " (broker and load generator included)",
                      i.cpuMicrosPerRequest(),
                      "us")
                  .against(
                      "bare produce-and-wait harness",
                      b.cpuMicrosPerRequest(),
                      i.cpuMicrosPerRequest() / b.cpuMicrosPerRequest()));
        }
      }

      // Step rates: the highest rate kept up with at p99 < 10 ms, and the highest kept up with at
      // all (p99 < 100 ms).
      int[] steps =
          ctx.quick
              ? new int[] {2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000}
              // 1k/s apart from 8k/s: at 2k/s apart a one-step difference above 12k/s is below
              // 0.9x (12/14, 14/16, 16/18), so the ratio target could not be met by a server
              // that falls behind one step before the other, however close their capacities.
              : new int[] {
                2000, 4000, 6000, 8000, 9000, 10000, 11000, 12000, 13000, 14000, 15000, 16000,
                17000, 18000, 19000, 20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000,
                29000, 30000
              };
      Search bareSearch = new Search("bare");
      Search ingressSearch = new Search("ingress");
      List<String> trace = new ArrayList<>();
      for (int rate : steps) {
        for (Search s :
            bareFirst ? List.of(bareSearch, ingressSearch) : List.of(ingressSearch, bareSearch)) {
          if (s.done) {
            continue;
          }
          int port = s == bareSearch ? bare.port() : ingress.port();
          OpenLoopLoad.Result r = step(load, port, rate, warmup, measure, webhooks, s.name);
          trace.add(s.name + " " + r);
          OpenLoopLoad.Result again = null;
          if (!Search.keptUp(r)) {
            // One stall of most of a second can hit any window on this box (as in the e2e
            // search): a step ends a server's search only if a second window misses too.
            again = step(load, port, rate, warmup, measure, webhooks, s.name);
            trace.add(s.name + " (2nd window) " + again);
          }
          s.offer(r, again);
        }
        if (bareSearch.done && ingressSearch.done) {
          break;
        }
        bareFirst = !bareFirst;
      }
      for (Search s : List.of(bareSearch, ingressSearch)) {
        if (!s.done) {
          // Since the load generator stopped spinning, bare can keep up at the top step: the
          // ratio is then only an upper bound, and the note says so.
          res.note(
              STAGE,
              String.format(
                  "%s kept up at the top step, %,d/s: its capacity is at least that, and a ratio"
                      + " against it is an upper bound",
                  s.name, steps[steps.length - 1]));
        }
      }
      double bestIngress = ingressSearch.under10;
      double bestBare = bareSearch.under10;
      res.add(
          Row.figure(STAGE, "accepted webhooks/s at p99 < 10 ms (step)", bestIngress, "req/s")
              .against(
                  "bare produce-and-wait harness",
                  bestBare,
                  bestBare == 0 ? Double.NaN : bestIngress / bestBare)
              .withTarget(
                  ">= 0.9x bare, >= 10k/s",
                  bestBare > 0 && bestIngress >= 0.9 * bestBare && bestIngress >= 10_000));
      res.add(
          Row.figure(
                  STAGE,
                  "accepted webhooks/s at p99 < 10 ms at every step up to it",
                  ingressSearch.under10Throughout,
                  "req/s")
              .against(
                  "bare produce-and-wait harness",
                  bareSearch.under10Throughout,
                  bareSearch.under10Throughout == 0
                      ? Double.NaN
                      : ingressSearch.under10Throughout / bareSearch.under10Throughout));
      res.add(
          Row.figure(
                  STAGE,
                  "max accepted webhooks/s kept up (p99 < 100 ms)",
                  ingressSearch.capacity,
                  "req/s")
              .against(
                  "bare produce-and-wait harness",
                  bareSearch.capacity,
                  bareSearch.capacity == 0
                      ? Double.NaN
                      : ingressSearch.capacity / bareSearch.capacity)
              .withTarget(
                  ">= 0.9x bare",
                  bareSearch.capacity > 0 && ingressSearch.capacity >= 0.9 * bareSearch.capacity));

      // The raw async producer, same records and settings (max.block.ms raised: it is the
      // producer's own ceiling, so send() may wait for buffer space).
      Map<String, Object> raw = new HashMap<>(producerConfig);
      raw.put(ProducerConfig.CLIENT_ID_CONFIG, "bench-raw");
      raw.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
      double rawRate = rawProducer(raw, "bench.raw", webhooks, warmup, measure);
      res.add(Row.figure(STAGE, "raw async producer, same records", rawRate, "rec/s"));
      res.add(
          Row.figure(
                  STAGE,
                  "ingress capacity / raw async producer",
                  ingressSearch.capacity / rawRate,
                  "ratio")
              .against("raw async producer", rawRate, ingressSearch.capacity / rawRate));
      res.add(
          Row.figure(
                  STAGE,
                  "bare capacity / raw async producer",
                  bareSearch.capacity / rawRate,
                  "ratio")
              .against("raw async producer", rawRate, bareSearch.capacity / rawRate));
      for (String t : trace) {
        res.note(STAGE, "step " + t);
      }
    } finally {
      registry.close(); // its JVM GC listener would outlive the stage
    }
  }

  /** The step search of one server. */
  static final class Search {
    final String name;
    double under10;

    /**
     * The highest step up to which every step's first window had p99 < 10 ms. {@link #under10} is
     * the highest such step anywhere, so near the limit, where one 10 s window's p99 lands anywhere
     * from 6 to 45 ms, it is the luckiest draw; this one is the steadier, lower bound.
     */
    double under10Throughout;

    private boolean under10Broken;
    double capacity;
    boolean done;

    Search(String name) {
      this.name = name;
    }

    /** Whether a step kept up: no errors, at least 99% answered, p99 under 100 ms. */
    static boolean keptUp(OpenLoopLoad.Result r) {
      return r.keptUp() && r.latency().p99() < 100;
    }

    /**
     * Takes a step's window and, if that one did not keep up, its second window ({@code again},
     * else null); stops after a step whose windows both missed. Only a step's first window counts
     * for p99 < 10 ms, so a server that stalls more gets no more draws at it.
     */
    void offer(OpenLoopLoad.Result first, OpenLoopLoad.Result again) {
      OpenLoopLoad.Result kept = keptUp(first) ? first : again;
      if (kept == null || !keptUp(kept)) {
        done = true;
        return;
      }
      capacity = Math.max(capacity, kept.achieved());
      if (kept == first && first.latency().p99() < P99_LIMIT_MS) {
        under10 = Math.max(under10, first.achieved());
        if (!under10Broken) {
          under10Throughout = first.achieved();
        }
      } else {
        under10Broken = true;
      }
    }
  }

  private OpenLoopLoad.Result step(
      OpenLoopLoad load,
      int port,
      int rate,
      Duration warmup,
      Duration measure,
      Webhooks webhooks,
      String name) {
    Webhooks.Signed[] ring = webhooks.batch(RING); // fresh timestamps for each step
    Instant start = Instant.now(); // for a profile's window (JfrTop FROM TO)
    OpenLoopLoad.Result r =
        load.run(port, rate, warmup, measure, i -> ring[(int) (i % RING)], null);
    System.out.printf("  %-8s %s [%s .. %s]%n", name, r, start, Instant.now());
    return r;
  }

  /** A latency of the ingress next to the bare harness's at the same rate. */
  private static Row row(String figure, double ingress, double bare) {
    return Row.figure(STAGE, figure, ingress, "ms")
        .against("bare produce-and-wait harness", bare, bare == 0 ? Double.NaN : ingress / bare);
  }

  /** Acked records/s of an async producer sending as fast as send() allows. */
  static double rawProducer(
      Map<String, Object> config,
      String topic,
      Webhooks webhooks,
      Duration warmup,
      Duration measure) {
    Webhooks.Signed[] ring = webhooks.batch(RING);
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(RING);
    for (Webhooks.Signed w : ring) {
      long now = System.currentTimeMillis();
      ProducerRecord<byte[], byte[]> record =
          new ProducerRecord<>(
              topic, null, now, w.runId().getBytes(StandardCharsets.UTF_8), w.body());
      records.add(record);
    }
    AtomicLong acked = new AtomicLong();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
      BareHarness.awaitMetadata(producer, topic);
      long start = System.nanoTime();
      long measureFrom = start + warmup.toNanos();
      long end = measureFrom + measure.toNanos();
      long ackedAtStart = -1;
      int i = 0;
      while (true) {
        long now = System.nanoTime();
        if (ackedAtStart < 0 && now >= measureFrom) {
          ackedAtStart = acked.get();
        }
        if (now >= end) {
          break;
        }
        Webhooks.Signed w = ring[i % RING];
        ProducerRecord<byte[], byte[]> base = records.get(i % RING);
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(topic, null, System.currentTimeMillis(), base.key(), base.value());
        Headers h = record.headers();
        RecordHeaders.put(h, RecordHeaders.REQUEST_ID, w.requestId());
        RecordHeaders.put(h, RecordHeaders.CREATED_AT, w.createdAt());
        RecordHeaders.put(h, RecordHeaders.RECEIVED_AT, Long.toString(record.timestamp()));
        RecordHeaders.put(h, RecordHeaders.SOURCE, "sume");
        h.add("http.x-sume-event-id", w.eventId().getBytes(StandardCharsets.UTF_8));
        h.add(
            "http.x-sume-timestamp", Long.toString(w.timestamp()).getBytes(StandardCharsets.UTF_8));
        h.add("http.x-sume-signature", w.signature().getBytes(StandardCharsets.UTF_8));
        producer.send(
            record,
            (md, e) -> {
              if (e == null) {
                acked.incrementAndGet();
              }
            });
        i++;
      }
      long ackedAtEnd = acked.get();
      double rate = (ackedAtEnd - ackedAtStart) / (measure.toNanos() / 1e9);
      producer.flush();
      System.out.printf("  raw      %,.0f acked records/s%n", rate);
      return rate;
    }
  }
}
