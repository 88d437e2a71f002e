package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.Fill;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.probe.Offsets;
import dev.runlane.bench.probe.ProcessorMeters;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.topology.StoreNames;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.DoubleStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Stage 6: state rebuild. The processor applies N events of N distinct runs (the run store then
 * holds N runs); it is closed, restarted once on its local state (no restore: the baseline of a
 * restart) and once after its state dir was deleted, so that Streams must restore every store from
 * its changelog. Next to it, in the same run, a raw {@code KafkaConsumer} reads the same changelog
 * topics from beginning to end.
 */
public final class RebuildStage extends Stage {
  static final String STAGE = "rebuild";
  static final String APP_ID = "bench-rebuild";

  /** One start of the processor: until RUNNING, and until {@code /runs/{id}} answered 200. */
  record Start(
      double runningSeconds,
      double restoredSeconds,
      double queryableSeconds,
      double restored,
      double restoreWindowSeconds) {}

  /**
   * The run stores' RocksDB memory once every run is applied, from Streams' RocksDB property
   * metrics: memtables, block caches, and index and filter blocks held outside the cache. Stores
   * that share one cache (RunStoreMemory) each report that cache, which also holds their index and
   * filter blocks and is charged for their memtables, so it alone is their total.
   */
  private static void rocksDbMemory(
      Results res, ProcessorApp app, ProcessorConfig config, int runs) {
    KafkaStreams streams = app.streams();
    String group = "stream-state-metrics";
    double memtables = ProcessorMeters.streamsMetric(streams, group, "size-all-mem-tables").sum();
    double readers =
        ProcessorMeters.streamsMetric(streams, group, "estimate-table-readers-mem").sum();
    boolean shared = config.rocksDbMemoryMb() > 0;
    DoubleStream caches = ProcessorMeters.streamsMetric(streams, group, "block-cache-usage");
    double cache = shared ? caches.max().orElse(0) : caches.sum();
    double total = shared ? cache + readers : memtables + cache + readers;
    double mib = 1024 * 1024;
    res.add(
        Row.figure(
            STAGE,
            String.format("run stores' RocksDB memory after applying %,d runs", runs),
            total / mib,
            "MiB"));
    res.note(
        STAGE,
        String.format(
            "RocksDB: memtables %.1f MiB, block cache %.1f MiB, index and filters outside it %.1f"
                + " MiB (%s)",
            memtables / mib,
            cache / mib,
            readers / mib,
            shared
                ? "one cache shared by every run store and charged for their memtables,"
                    + " PROCESSOR_ROCKSDB_MEMORY_MB="
                    + config.rocksDbMemoryMb()
                : "Streams' per-store defaults, PROCESSOR_ROCKSDB_MEMORY_MB=0"));
  }

  public RebuildStage() {
    super(STAGE, Services.PROCESSOR_TUNING);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    int runs = ctx.volume();
    String prefix = "rebuild.";
    String input = prefix + "webhooks";
    ctx.createTopics(input);
    long t0 = System.nanoTime();
    Fill.onePerRun(ctx.bootstrap(), input, "run-", runs);
    double fillSeconds = (System.nanoTime() - t0) / 1e9;
    TopicNames topics =
        new TopicNames(input, prefix + "dlq", prefix + "events", prefix + "stale", prefix + "runs");
    // Dedup off: the run store is what is rebuilt; Redis plays no part in a restore.
    ProcessorConfig config =
        Services.processorConfig(ctx.bootstrap(), ctx.redis(), APP_ID, topics, false);
    Path stateDir = config.stateDir();
    String probeRun = "run-" + (runs - 1);

    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, ctx.bootstrap()))) {
      // 1. Fill the run store: every event applied and committed.
      double applySeconds;
      {
        PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
        ProcessorApp app = Services.startProcessor(config, Dedup.disabled(), registry);
        try {
          long start = System.nanoTime();
          Offsets.awaitCommitted(admin, APP_ID, input, Duration.ofMinutes(20));
          applySeconds = (System.nanoTime() - start) / 1e9;
          rocksDbMemory(res, app, config, runs);
        } finally {
          try {
            closeLeavingGroup(app);
          } finally {
            registry.close(); // its JVM GC listener would outlive the fill
          }
        }
      }
      System.out.printf(
          "  filled the run store: %,d runs applied in %.1f s (input filled in %.1f s)%n",
          runs, applySeconds, fillSeconds);

      Map<String, Long> changelogs = changelogRecords(admin);
      String runsChangelog = StoreNames.changelog(APP_ID, StoreNames.RUNS);

      // 2. Restart on the local state (checkpointed on clean close): no restore.
      Start warm = startAndMeasure(config, probeRun);
      System.out.printf(
          "  restart with local state: RUNNING after %.2f s, restored after %.2f s (%,.0f records"
              + " restored), /runs answered after %.2f s%n",
          warm.runningSeconds(), warm.restoredSeconds(), warm.restored(), warm.queryableSeconds());

      // 3. Delete the local state: Streams must restore the stores from their changelogs.
      deleteRecursively(stateDir);
      Start cold = startAndMeasure(config, probeRun);
      System.out.printf(
          "  restart after deleting %s: RUNNING after %.2f s, restored after %.2f s (%,.0f records"
              + " restored in a %.2f s window), /runs answered after %.2f s%n",
          stateDir,
          cold.runningSeconds(),
          cold.restoredSeconds(),
          cold.restored(),
          cold.restoreWindowSeconds(),
          cold.queryableSeconds());

      // 4. Baseline: a raw consumer over the same changelog topics, beginning to end.
      double[] rawRuns = rawRead(ctx.bootstrap(), List.of(runsChangelog));
      double[] rawAll = rawRead(ctx.bootstrap(), List.copyOf(changelogs.keySet()));
      System.out.printf(
          "  raw consumer: %s %,.0f records in %.2f s; all changelogs %,.0f records in %.2f s%n",
          runsChangelog, rawRuns[0], rawRuns[1], rawAll[0], rawAll[1]);

      double totalPerMillion = cold.restoredSeconds() * 1e6 / runs;
      double rawPerMillion = rawAll[1] * 1e6 / runs;
      res.add(
          Row.figure(
                  STAGE,
                  String.format("restart, state dir deleted -> restored+RUNNING (%,d runs)", runs),
                  cold.restoredSeconds(),
                  "s")
              .against(
                  "restart on local state",
                  warm.restoredSeconds(),
                  cold.restoredSeconds() / warm.restoredSeconds()));
      res.add(
          Row.figure(
                  STAGE,
                  "whole restart per 1M runs (start -> restored)",
                  totalPerMillion,
                  "s/1M runs")
              .against(
                  "raw KafkaConsumer, same changelogs",
                  rawPerMillion,
                  totalPerMillion / rawPerMillion)
              .withTarget("<= 5 s per 1M runs", totalPerMillion <= 5));
      double windowPerMillion = cold.restoreWindowSeconds() * 1e6 / runs;
      res.add(
          Row.figure(
                  STAGE,
                  "restore window per 1M runs (restoration begun -> done)",
                  windowPerMillion,
                  "s/1M runs")
              .against(
                  "raw KafkaConsumer, same changelogs",
                  rawPerMillion,
                  windowPerMillion / rawPerMillion)
              .withTarget("<= 5 s per 1M runs", windowPerMillion <= 5));
      double rawRate = rawAll[0] / rawAll[1];
      res.add(
          Row.figure(
                  STAGE,
                  "changelog records restored/s (restore window, cold)",
                  cold.restored() / cold.restoreWindowSeconds(),
                  "rec/s")
              .against(
                  "raw KafkaConsumer, same changelogs",
                  rawRate,
                  cold.restored() / cold.restoreWindowSeconds() / rawRate));
      res.add(
          Row.figure(
                  STAGE,
                  "restart, state dir deleted -> /runs/{id} answers",
                  cold.queryableSeconds(),
                  "s")
              .against(
                  "restart on local state",
                  warm.queryableSeconds(),
                  cold.queryableSeconds() / warm.queryableSeconds()));
      res.note(
          STAGE,
          String.format(
              "%,d events of %,d distinct runs (~%d B bodies) applied (dedup off, exactly_once_v2,"
                  + " %d stream thread(s)) in %.1f s; changelog end offsets %s (offsets include"
                  + " transaction markers; the raw consumer read %,.0f records, read_committed);"
                  + " the previous instance left the group on close, so no session timeout is"
                  + " waited for; start -> RUNNING includes topic checks, RocksDB open, producer"
                  + " init and the group join, which the restart on local state measures alone;"
                  + " raw consumer over %s alone: %,.0f records in %.2f s; 'restored' = RUNNING"
                  + " and the state updater's active-restoring-tasks gauge at 0; restore"
                  + " consumers fetched %,.0f records (cold) and %,.0f (warm); RUNNING came at"
                  + " %.2f s (cold) and %.2f s (warm); restore windows %.2f s (cold), %.2f s (warm)",
              runs,
              runs,
              Fill.BODY_BYTES,
              config.streamThreads(),
              applySeconds,
              changelogs,
              rawAll[0],
              runsChangelog,
              rawRuns[0],
              rawRuns[1],
              cold.restored(),
              warm.restored(),
              cold.runningSeconds(),
              warm.runningSeconds(),
              cold.restoreWindowSeconds(),
              warm.restoreWindowSeconds()));
    }
  }

  /** Closes the app so that its member leaves the group (a restart then waits for no timeout). */
  private static void closeLeavingGroup(ProcessorApp app) {
    try {
      app.streams()
          .close(
              CloseOptions.groupMembershipOperation(
                      CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                  .withTimeout(Duration.ofSeconds(30)));
    } finally {
      app.close();
    }
  }

  private Start startAndMeasure(ProcessorConfig config, String probeRun) throws Exception {
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    try {
      return startAndMeasure(config, probeRun, registry);
    } finally {
      registry.close(); // its JVM GC listener would outlive the measurement
    }
  }

  private Start startAndMeasure(
      ProcessorConfig config, String probeRun, PrometheusMeterRegistry registry) throws Exception {
    long start = System.nanoTime();
    // The wall clock of the start, to lay the processor's log beside it.
    System.out.printf("  processor starting at %s%n", LocalTime.now());
    ProcessorApp app = Services.startProcessor(config, Dedup.disabled(), registry);
    try {
      long deadline = start + Duration.ofMinutes(10).toNanos();
      // With the state updater, restoration runs in its own thread: done when the client is
      // RUNNING and the updater has no restoring active task left (its gauge). The window begins
      // when the updater first holds a restoring task. Not at the restore consumers' first
      // records-consumed-total: the consumer counts a fetch's records only once the whole fetch
      // response is drained, seconds into a cold restore (D105).
      long runningAt = -1;
      long restoreBegunAt = -1;
      while (true) {
        long now = System.nanoTime();
        if (restoreBegunAt < 0
            && (restoringTasks(app.streams()) > 0 || restoreConsumed(app.streams()) > 0)) {
          restoreBegunAt = now;
        }
        if (runningAt < 0 && app.streams().state() == KafkaStreams.State.RUNNING) {
          runningAt = now;
        }
        if (runningAt >= 0 && restoringTasks(app.streams()) == 0) {
          break;
        }
        if (now > deadline) {
          throw new IllegalStateException(
              "not restored after 10 minutes: " + app.streams().state());
        }
        LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
      }
      long restoredNanos = System.nanoTime();
      double running = (runningAt - start) / 1e9;
      double restoredAt = (restoredNanos - start) / 1e9;
      double window = restoreBegunAt < 0 ? 0 : (restoredNanos - restoreBegunAt) / 1e9;
      double restored = restoreConsumed(app.streams());
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest get =
          HttpRequest.newBuilder(
                  URI.create("http://127.0.0.1:" + app.adminPort() + "/runs/" + probeRun))
              .timeout(Duration.ofSeconds(5))
              .build();
      double queryable = Double.NaN;
      while (System.nanoTime() < deadline) {
        HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          queryable = (System.nanoTime() - start) / 1e9;
          break;
        }
        if (r.statusCode() == 404 && r.body().contains("not_found")) {
          // RUNNING but the run is not there: the store was not restored.
          throw new IllegalStateException(
              "run " + probeRun + " missing after restart: " + r.body());
        }
        LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
      }
      return new Start(running, restoredAt, queryable, restored, window);
    } finally {
      closeLeavingGroup(app);
    }
  }

  /** The state updater's {@code active-restoring-tasks} gauge, summed over threads. */
  static double restoringTasks(KafkaStreams streams) {
    return streams.metrics().entrySet().stream()
        .filter(e -> e.getKey().name().equals("active-restoring-tasks"))
        .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
        .sum();
  }

  /** Records fetched by the restore consumers ({@code records-consumed-total}). */
  static double restoreConsumed(KafkaStreams streams) {
    return streams.metrics().entrySet().stream()
        .filter(
            e ->
                e.getKey().name().equals("records-consumed-total")
                    && e.getKey().group().equals("consumer-fetch-manager-metrics")
                    && !e.getKey().tags().containsKey("topic")
                    && e.getKey().tags().getOrDefault("client-id", "").endsWith("restore-consumer"))
        .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
        .sum();
  }

  /** End offsets (summed) of every changelog topic of the application. */
  private static Map<String, Long> changelogRecords(Admin admin) throws Exception {
    Map<String, Long> out = new TreeMap<>();
    for (String topic : admin.listTopics().names().get()) {
      if (topic.startsWith(APP_ID + "-") && topic.endsWith("-changelog")) {
        out.put(
            topic,
            Offsets.endOffsets(admin, topic).values().stream().mapToLong(Long::longValue).sum());
      }
    }
    return out;
  }

  /** {records, seconds}: a read_committed consumer from the beginning to the end offsets. */
  static double[] rawRead(String bootstrap, List<String> topics) {
    // Streams' restore consumer uses max.poll.records 1000 by default too; keep the client
    // defaults, but not the fixed receive buffer, which the processor's clients drop (D34).
    Map<String, Object> c = KafkaClients.readCommitted(bootstrap);
    long start = System.nanoTime();
    long records = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = new ArrayList<>();
      for (String t : topics) {
        consumer.partitionsFor(t).forEach(p -> parts.add(new TopicPartition(t, p.partition())));
      }
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      Map<TopicPartition, Long> end = consumer.endOffsets(parts);
      long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
      while (true) {
        boolean done = true;
        for (TopicPartition tp : parts) {
          if (consumer.position(tp) < end.get(tp)) {
            done = false;
            break;
          }
        }
        if (done || System.nanoTime() > deadline) {
          break;
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          records++;
        }
      }
    }
    return new double[] {records, (System.nanoTime() - start) / 1e9};
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        if (!p.equals(dir)) {
          Files.delete(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
