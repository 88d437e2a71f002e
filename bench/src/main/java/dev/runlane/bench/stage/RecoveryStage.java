package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.Fill;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.load.RateSchedule;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.Offsets;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.kafka.RecordHeaders;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Stage 5: a processor running as a child JVM ({@code ProcessorMain}, this jar) under a constant
 * input load is killed with SIGKILL and started again on the same state dir (a restarted pod); the
 * time until input written after the kill is visible, committed, in the events topic, and whether
 * every acked input record ends in the events topic exactly once. Then {@link RedisRestartCheck}:
 * the processor's Redis restarted under load.
 */
public final class RecoveryStage extends Stage {
  static final String STAGE = "recovery";
  static final String APP_ID = "bench-recovery";

  /**
   * Runs in the processor's store before the kill ({@code BENCH_RECOVERY_RUNS}): under exactly-once
   * a killed task has no checkpoint, so what its restart restores grows with the store.
   */
  static final String RUNS_VARIABLE = "BENCH_RECOVERY_RUNS";

  static final String GROUP_INSTANCE_ID = "PROCESSOR_GROUP_INSTANCE_ID";
  static final String BENCH_INSTANCE_ID = "bench-recovery-processor-0";

  public RecoveryStage() {
    super(
        STAGE,
        Stream.concat(
                Stream.of(RUNS_VARIABLE, ClassDataArchive.VARIABLE),
                Services.PROCESSOR_TUNING.stream())
            .toList());
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Exception killFailure = null;
    try {
      killAndRestart(ctx);
    } catch (Exception e) {
      killFailure = e; // still measure the Redis restart
      ctx.results.note(STAGE, "kill -9 part FAILED: " + e);
    }
    new RedisRestartCheck(ctx).run();
    if (killFailure != null) {
      throw killFailure;
    }
  }

  private static void killAndRestart(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    String bootstrap = ctx.bootstrap();
    String prefix = "rec.";
    String input = prefix + "webhooks";
    String events = prefix + "events";
    ctx.createTopics(input, prefix + "dlq", events, prefix + "stale");
    Path stateDir = Files.createTempDirectory("runlane-bench-recovery");
    int rate = 1000;
    int storedRuns =
        (int) BenchContext.envNumber(RUNS_VARIABLE, ctx.quick ? 100_000 : 1_000_000, 0);

    Map<String, Long> producedAt = new ConcurrentHashMap<>();
    Set<String> acked = ConcurrentHashMap.newKeySet();
    AtomicLong notAcked = new AtomicLong();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    AtomicLong lastSeenNanos = new AtomicLong();
    AtomicBoolean stopProducer = new AtomicBoolean();
    AtomicBoolean stopReader = new AtomicBoolean();
    List<Long> seenAfterKill = new ArrayList<>();
    AtomicLong killNanos = new AtomicLong(Long.MAX_VALUE);
    AtomicLong firstNewOutput = new AtomicLong(-1);
    CountDownLatch readerPositioned = new CountDownLatch(1);

    Thread producer =
        new Thread(
            () -> produce(bootstrap, input, rate, stopProducer, producedAt, acked, notAcked),
            "rec-producer");
    Thread reader =
        new Thread(
            () -> {
              Map<String, Object> c = KafkaClients.readCommitted(bootstrap);
              try (KafkaConsumer<byte[], byte[]> consumer =
                  new KafkaConsumer<>(
                      c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> parts =
                    consumer.partitionsFor(events).stream()
                        .map(p -> new TopicPartition(events, p.partition()))
                        .toList();
                consumer.assign(parts);
                consumer.seekToEnd(parts); // after the pre-filled runs' events
                parts.forEach(consumer::position);
                readerPositioned.countDown();
                while (!stopReader.get()) {
                  var records = consumer.poll(Duration.ofMillis(50));
                  long now = System.nanoTime();
                  for (ConsumerRecord<byte[], byte[]> r : records) {
                    String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
                    if (id == null || !producedAt.containsKey(id)) {
                      // Not the live load's: a pre-filled event still parked when its input
                      // offset was committed can be decided after this reader's positions.
                      continue;
                    }
                    seen.merge(id, 1, Integer::sum);
                    lastSeenNanos.set(now);
                    Long at = producedAt.get(id);
                    if (at != null && at > killNanos.get() && firstNewOutput.get() < 0) {
                      firstNewOutput.set(now);
                    }
                  }
                }
              }
            },
            "rec-reader");

    ProcessorChild first = null;
    ProcessorChild second = null;
    try {
      double storeFillSeconds = 0;
      if (storedRuns > 0) {
        long fillStart = System.nanoTime();
        // Runs of their own: the live load's events then never meet a pre-filled run.
        Fill.onePerRun(bootstrap, input, "stored-run-", storedRuns);
        first = startProcessor(ctx, prefix, stateDir, "a");
        try (Admin admin =
            Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
          Offsets.awaitCommitted(admin, APP_ID, input, Duration.ofMinutes(10));
        }
        storeFillSeconds = (System.nanoTime() - fillStart) / 1e9;
        System.out.printf(
            "  run store filled: %,d runs written, their input committed in %.1f s%n",
            storedRuns, storeFillSeconds);
      } else {
        first = startProcessor(ctx, prefix, stateDir, "a");
      }
      reader.start();
      if (!readerPositioned.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the events reader did not get its positions in 30 s");
      }
      producer.start();
      awaitOutput(seen, Duration.ofSeconds(90), "first processor");
      LockSupport.parkNanos(Duration.ofSeconds(ctx.quick ? 5 : 10).toNanos());
      killNanos.set(System.nanoTime());
      first.process().destroyForcibly(); // SIGKILL on Linux
      // The wall clock of the kill, to lay the new JVM's log beside it.
      System.out.printf("  kill -9 at %s%n", LocalTime.now());
      first.process().waitFor(10, TimeUnit.SECONDS);
      long killed = killNanos.get();
      second = startProcessor(ctx, prefix, stateDir, "b");
      // Where the time goes: the new JVM serving its admin port, and Streams RUNNING (every task
      // restored). A task that is restored early already processes while others restore, so the
      // first new output can come before RUNNING.
      long live = -1;
      long ready = -1;
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();
      while ((firstNewOutput.get() < 0 || ready < 0) && System.nanoTime() < deadline) {
        // A probe's send time: a busy new JVM can take a while to answer it.
        long probe = System.nanoTime();
        if (live < 0 && second.answers(http, "/health/live")) {
          live = probe;
        }
        probe = System.nanoTime();
        if (live >= 0 && ready < 0 && second.answers(http, "/health/ready")) {
          ready = probe;
        }
        LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
      }
      double recovery =
          firstNewOutput.get() < 0 ? Double.NaN : (firstNewOutput.get() - killed) / 1e9;
      double liveSeconds = live < 0 ? Double.NaN : (live - killed) / 1e9;
      double readySeconds = ready < 0 ? Double.NaN : (ready - killed) / 1e9;
      System.out.printf(
          "  after kill -9: the new JVM answers /health/live at %.1f s, /health/ready (Streams"
              + " RUNNING: every task restored) at %.1f s; output flows again at %.1f s (%s)%n",
          liveSeconds, readySeconds, recovery, membership());
      double probeMillis = second.roundTripMillis(http, "/health/live", 50);
      System.out.printf(
          "  the restarted JVM's /health/live: %.1f ms a round trip (median of 50, one"
              + " kept-alive connection)%n",
          probeMillis);
      LockSupport.parkNanos(Duration.ofSeconds(ctx.quick ? 5 : 10).toNanos());
      stopProducer.set(true);
      producer.join(30_000);
      long wait = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (System.nanoTime() < wait && !seen.keySet().containsAll(acked)) {
        LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
      }
      long lost = acked.stream().filter(id -> !seen.containsKey(id)).count();
      long doubled = seen.values().stream().filter(n -> n > 1).count();
      res.add(
          Row.figure(
                  STAGE,
                  String.format(
                      "kill -9 -> new input visible in events (restart, %,d runs stored)",
                      storedRuns),
                  recovery,
                  "s")
              .withTarget("<= 10 s", recovery <= 10));
      res.add(Row.figure(STAGE, "kill -9 -> restarted JVM answers /health/live", liveSeconds, "s"));
      res.add(
          Row.figure(
              STAGE,
              "kill -9 -> /health/ready (every task restored, Streams RUNNING)",
              readySeconds,
              "s"));
      res.add(
          Row.figure(
              STAGE,
              "admin port round trip under load (median of 50 /health/live, kept-alive)",
              probeMillis,
              "ms"));
      res.add(
          Row.figure(STAGE, "acked input records lost / applied twice", lost + doubled, "records")
              .withTarget("0", lost == 0 && doubled == 0));
      res.note(
          STAGE,
          String.format(
              "%,d records acked by Kafka (acks=all) at %d/s (%,d sends failed, never acked),"
                  + " unique request_ids; %,d lost, %,d"
                  + " applied twice; processor = child JVM (ProcessorMain from this jar, exactly_once_v2,"
                  + " session.timeout.ms 6000, Redis dedup), SIGKILLed after steady output, a new JVM"
                  + " started at once on the same state dir; %s;"
                  + " run store before the kill: %,d pre-filled runs (%s=%d; written, their input"
                  + " committed in %.1f s)"
                  + " plus the live load's 10,000; PROCESSOR_TRANSACTIONAL_STATE_STORES=%s",
              acked.size(),
              rate,
              notAcked.get(),
              lost,
              doubled,
              membership(),
              storedRuns,
              RUNS_VARIABLE,
              storedRuns,
              storeFillSeconds,
              System.getenv()
                  .getOrDefault("PROCESSOR_TRANSACTIONAL_STATE_STORES", "true (default)")));
    } finally {
      stopProducer.set(true);
      stopReader.set(true);
      producer.join(10_000);
      reader.join(10_000);
      for (ProcessorChild c : new ProcessorChild[] {first, second}) {
        if (c != null) {
          c.stop();
        }
      }
    }
  }

  /**
   * Both children share one group instance id, as a restarted StatefulSet pod does (D29), unless
   * the bench's environment sets {@code PROCESSOR_GROUP_INSTANCE_ID} (blank: dynamic members).
   */
  private static String membership() {
    String id = System.getenv(GROUP_INSTANCE_ID);
    if (id == null) {
      return "static membership: both JVMs have group instance id " + BENCH_INSTANCE_ID;
    }
    return id.isBlank()
        ? "dynamic membership: the dead member holds its tasks until its 6 s session expires"
        : "static membership: group instance id " + id.strip() + " from the environment";
  }

  private static ProcessorChild startProcessor(
      BenchContext ctx, String prefix, Path stateDir, String name) throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", ctx.bootstrap());
    env.put("REDIS_URL", ctx.redis().uri().toString());
    env.put("PROCESSOR_APPLICATION_ID", APP_ID);
    env.put("PROCESSOR_STATE_DIR", stateDir.toString());
    env.put("TOPIC_WEBHOOKS", prefix + "webhooks");
    env.put("TOPIC_DLQ", prefix + "dlq");
    env.put("TOPIC_EVENTS", prefix + "events");
    env.put("TOPIC_STALE", prefix + "stale");
    env.put("TOPIC_RUNS", prefix + "runs");
    env.put("TOPIC_PARTITIONS", Integer.toString(BenchContext.PARTITIONS));
    env.put("DEDUP_KEY_PREFIX", "bench:recovery:");
    if (System.getenv(GROUP_INSTANCE_ID) == null) {
      env.put(GROUP_INSTANCE_ID, BENCH_INSTANCE_ID);
    }
    return ProcessorChild.start(
        ctx,
        STAGE,
        name,
        ProcessorChild.freePort(),
        List.of("-Xmx512m", "-Dlogback.configurationFile=runlane-bench-logback.xml"),
        env);
  }

  private static void awaitOutput(Map<String, Integer> seen, Duration timeout, String what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (seen.isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no output from the " + what + " within " + timeout);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
  }

  static void produce(
      String bootstrap,
      String topic,
      int rate,
      AtomicBoolean stop,
      Map<String, Long> producedAt,
      Set<String> acked,
      AtomicLong notAcked) {
    Map<String, Object> p = KafkaClients.live(bootstrap);
    SplittableRandom random = new SplittableRandom(21);
    long idHigh = random.nextLong();
    Instant t0 = Instant.now();
    RateSchedule schedule = new RateSchedule(System.nanoTime(), rate);
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      for (long i = 0; !stop.get(); i++) {
        schedule.parkUntilDue(i);
        String id = new UUID(idHigh, i).toString();
        String run = "run-" + random.nextInt(10_000);
        ProducerRecord<String, byte[]> record =
            Webhooks.record(topic, id, run, t0.plusMillis(i), 512, random);
        producedAt.put(id, System.nanoTime());
        producer.send(record, KafkaClients.countAck(id, acked, notAcked));
      }
      producer.flush();
    }
  }
}
