package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.StoreNames;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A processor JVM with a 3 s reorder window (D46) killed with SIGKILL while it holds events, some
 * committed, restarted on its state dir, killed so again and restarted on a fresh one. Each run's
 * events and retries arrive within the window in shuffled created_at order: all must be applied,
 * once each, in order (read read_committed). Child JVMs as in ProcessorFailoverIT; logs in target/.
 */
@RealInfra
class ReorderWindowFailoverIT {
  private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
  private static final long WINDOW_MS = 3_000;
  private static final int RUNS = 100; // per phase, 5 events each
  private static final Comparator<Event> ORDER =
      Comparator.comparing(Event::createdAt).thenComparing(Event::requestId);
  private static final String HELD = "runlane_processor_events_total outcome=\"held\"";
  // Both "released" and "released_early"; with a closing quote, the first alone.
  private static final String RELEASED = "runlane_processor_reorder_events_total event=\"released";

  record Event(String runId, String requestId, Instant createdAt) {}

  private final Map<String, Event> events = new ConcurrentHashMap<>();
  private final AtomicInteger sent = new AtomicInteger();
  private final List<Thread> senders = new ArrayList<>();
  private final List<Process> children = new ArrayList<>();
  private final List<String> kills = new ArrayList<>(); // figures of each kill
  private volatile Throwable sendError;
  private ProcessorHarness h; // names, producer and readers only: the processors are child JVMs
  private Admin admin;

  @Test
  void aKillWithEventsHeldLosesNoneAppliesNoneTwiceAndKeepsEachRunInOrder(Infra infra)
      throws Exception {
    h =
        new ProcessorHarness(
            infra.bootstrapServers(), infra.redisUri(), infra.uniqueName("rwf"), 1);
    admin = Admin.create(Map.<String, Object>of("bootstrap.servers", h.bootstrap));
    try (HeldLog heldLog = new HeldLog();
        ProcessorHarness.Reader input = h.new Reader(h.topics.webhooks());
        ProcessorHarness.Reader applied = h.new Reader(h.topics.events());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale());
        ProcessorHarness.Reader runs = h.new Reader(h.topics.runs());
        ProcessorHarness.Reader dlq = h.new Reader(h.topics.dlq())) {
      Path dirA = Files.createDirectories(Path.of("target", "rwf-state", h.applicationId, "a"));
      Child a = start("a", dirA);
      send(0, RUNS);
      int restored = killWithEventsHeld(a, heldLog, 0).size();
      Child b = start("b", dirA); // a restarted pod: the same state dir
      send(RUNS, 2 * RUNS);
      killWithEventsHeld(b, heldLog, restored);
      // A new pod: its stores restored from the changelogs.
      Child c = start("c", Files.createDirectories(dirA.resolveSibling("c")));
      boolean settled =
          within(
              () ->
                  senders.stream().noneMatch(Thread::isAlive)
                      && inputCommitted()
                      && Set.of().equals(heldLog.committed())
                      && applied.caughtUp()
                      && stale.caughtUp()
                      && runs.caughtUp()
                      && dlq.caughtUp());
      assertThat(sendError).as("the sender's failure").isNull();

      await().atMost(Duration.ofSeconds(30)).until(input::caughtUp);
      Map<String, List<Event>> expected =
          events.values().stream()
              .sorted(ORDER)
              .collect(Collectors.groupingBy(Event::runId, TreeMap::new, Collectors.toList()));
      Set<String> appliedIds = Set.copyOf(applied.requestIds());
      System.out.printf(
          "reorder window failover: %,d records, %,d request_ids over %d runs; at the kills %s;"
              + " released by c %,.0f (early %,.0f); applied %,d (%,d request_ids), stale %d,"
              + " dead-lettered %d; settled %s%n",
          input.records.size(),
          events.size(),
          expected.size(),
          kills,
          c.metric(RELEASED + "\""),
          c.metric(RELEASED + "_early\""),
          applied.records.size(),
          appliedIds.size(),
          stale.records.size(),
          dlq.records.size(),
          settled);

      // The scenario: each run's records arrived within the window.
      assertThat(input.records).as("input records").hasSize(sent.get());
      input.records.stream()
          .collect(
              Collectors.groupingBy(r -> r.key(), Collectors.summarizingLong(r -> r.timestamp())))
          .forEach(
              (run, ts) ->
                  assertThat(ts.getMax() - ts.getMin())
                      .as("arrival spread of %s (ms)", run)
                      .isLessThan(WINDOW_MS));

      assertThat(events.keySet().stream().filter(id -> !appliedIds.contains(id)).sorted())
          .as("request_ids never applied (stale: %s)", stale.requestIds())
          .isEmpty();
      Map<String, List<Event>> byRun = new TreeMap<>();
      applied.records.forEach(
          r -> byRun.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(events.get(id(r))));
      byRun.forEach(
          (run, list) ->
              assertThat(list)
                  .as("events applied to %s: each once, in (created_at, request_id) order", run)
                  .doesNotHaveDuplicates()
                  .isSortedAccordingTo(ORDER));
      assertThat(byRun).as("applied events of each run, in order").isEqualTo(expected);
      // Held events restored after a kill carry the body and headers read back from the input
      // (D49): every applied record is its input record's body, under the input's headers.
      Map<String, List<ConsumerRecord<String, byte[]>>> copies =
          input.records.stream().collect(Collectors.groupingBy(ReorderWindowFailoverIT::id));
      applied.records.forEach(
          r ->
              assertThat(copies.get(id(r)))
                  .as("input copies of %s", id(r))
                  .anySatisfy(
                      in -> {
                        assertThat(r.value()).as("body").isEqualTo(in.value());
                        assertThat(r.timestamp()).as("timestamp").isEqualTo(in.timestamp());
                        assertThat(headers(r)).as("headers").isEqualTo(headers(in));
                      }));
      // The last state of each run: its newest event, with every event counted.
      Map<String, RunState.Head> last = new TreeMap<>();
      Map<String, RunState.Head> newest = new TreeMap<>();
      runs.records.forEach(r -> last.put(r.key(), RunStateJson.fromJson(r.value()).head()));
      expected.forEach(
          (run, l) -> {
            Event e = l.get(l.size() - 1);
            newest.put(run, new RunState.Head(e.requestId(), e.createdAt(), l.size()));
          });
      assertThat(last).as("the last sume.runs state of each run").isEqualTo(newest);
      assertThat(stale.requestIds()).as("stale events").isEmpty();
      assertThat(dlq.records).as("dead-lettered records").isEmpty();
      assertThat(settled).as("input committed and nothing held within the deadline").isTrue();
    }
  }

  /**
   * Waits until {@code p} holds events and 100 more records are sent, then for a commit after that,
   * so that some held events are committed, and kills it, well before they are due.
   */
  private Set<Long> killWithEventsHeld(Child p, HeldLog heldLog, long restored) throws Exception {
    int from = sent.get();
    upTo(60).until(() -> sent.get() - from >= 100 && p.metric(HELD) > 0);
    long before = committedInput();
    upTo(10).until(() -> committedInput() > before);
    // What it restored, plus what it held, less what it released (after the window or early).
    double heldNow = restored + p.metric(HELD) - p.metric(RELEASED);
    p.process.destroyForcibly();
    assertThat(p.process.waitFor(30, TimeUnit.SECONDS)).as("%s gone", p.name).isTrue();
    assertThat(p.process.exitValue()).as("%s's exit code after SIGKILL", p.name).isEqualTo(137);
    // read_committed: what the kill's open transaction held is not in it
    Set<Long> held =
        await().atMost(Duration.ofSeconds(30)).until(heldLog::committed, s -> s != null);
    kills.add(String.format("%s: %.0f held, %d of them committed", p.name, heldNow, held.size()));
    assertThat(heldNow).as("events held at the kill of %s (/metrics)", p.name).isPositive();
    assertThat(held).as("held events committed at the kill of %s", p.name).isNotEmpty();
    return held;
  }

  /**
   * Sends runs [from, to), paced: run i starts 30 ms after run i-1, its five events 250 ms apart in
   * shuffled created_at order (pairs share a created_at; the request_id breaks the tie); every
   * third run has one event sent again 125 ms later (a retry: the same request_id and body).
   */
  private void send(int from, int to) {
    Random random = new Random(46 + from);
    TreeMap<Long, Event> plan = new TreeMap<>(); // by send time (µs); unique by construction
    for (int run = from; run < to; run++) {
      List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4));
      Collections.shuffle(order, random);
      Collections.swap(order, 0, order.get(0) < order.get(1) ? 1 : 0); // never in order
      String runId = String.format("run-%03d", run);
      for (int slot = 0; slot < 5; slot++) {
        int n = order.get(slot);
        Event e = new Event(runId, runId + "-e" + n, T0.plusSeconds(run * 10L + n / 2));
        events.put(e.requestId(), e);
        long micros = (run - from) * 30_000L + slot * 250_000L + run;
        plan.put(micros, e);
        if (run % 3 == 0 && slot == run % 4) {
          plan.put(micros + 125_000L, e);
        }
      }
    }
    long start = System.nanoTime();
    Runnable deliver =
        () -> {
          try {
            for (Map.Entry<Long, Event> due : plan.entrySet()) {
              LockSupport.parkNanos(start + due.getKey() * 1_000 - System.nanoTime()); // pacing
              Event e = due.getValue(); // with the ingress's headers request_id and received_at
              // Not waiting for each ack: the record's time is taken as it is sent, and on two
              // loaded cores the waits for acks spread one run's records over more than the window.
              h.sendAsync(e.runId(), e.requestId(), e.createdAt(), "", this::failed);
              sent.incrementAndGet();
            }
            h.flush();
          } catch (Throwable e) {
            sendError = e;
          }
        };
    senders.add(new Thread(deliver, "rwf-sender-" + from));
    senders.get(senders.size() - 1).start();
  }

  private void failed(RecordMetadata metadata, Exception e) {
    if (e != null) {
      sendError = e;
    }
  }

  /** Starts {@link ProcessorMain} in a JVM of its own, and waits until it is ready. */
  private Child start(String name, Path stateDir) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    ProcessBuilder pb =
        new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", // two busy cores: a cheap JIT starts faster
            "-cp",
            System.getProperty("java.class.path"),
            ProcessorMain.class.getName());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.matches("(KAFKA|REDIS|PROCESSOR|TOPIC|DEDUP)_.*"));
    env.put("KAFKA_BOOTSTRAP_SERVERS", h.bootstrap);
    env.put("REDIS_URL", h.redisUri.toString());
    env.put("PROCESSOR_APPLICATION_ID", h.applicationId);
    env.put("PROCESSOR_STATE_DIR", stateDir.toString());
    env.put("PROCESSOR_PORT", Integer.toString(port));
    env.put("DEDUP_KEY_PREFIX", h.keyPrefix);
    env.put("TOPIC_WEBHOOKS", h.topics.webhooks());
    env.put("TOPIC_EVENTS", h.topics.events());
    env.put("TOPIC_STALE", h.topics.stale());
    env.put("TOPIC_RUNS", h.topics.runs());
    env.put("TOPIC_DLQ", h.topics.dlq());
    env.put("TOPIC_PARTITIONS", "4");
    env.put("TOPIC_REPLICATION_FACTOR", "1");
    env.put("PROCESSOR_ROCKSDB_MEMORY_MB", "32");
    env.put("PROCESSOR_THREADS", "1");
    env.put("PROCESSOR_REORDER_WINDOW", WINDOW_MS / 1000 + "s");
    env.put("PROCESSOR_COMMIT_INTERVAL_MS", "1000"); // a kill aborts up to a second of work
    Path log = Path.of("target", "reorder-failover-" + h.applicationId + "-" + name + ".log");
    Process process = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    children.add(process);
    Child child = new Child(name, process, port);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .ignoreExceptionsInstanceOf(IOException.class) // not listening, or not ready yet
        .until(
            () -> {
              assertThat(process.isAlive()).as("%s alive (log %s)", name, log).isTrue();
              return child.get("/health/ready") != null;
            });
    return child;
  }

  /** The group's committed input offsets, summed (those of open transactions not among them). */
  private long committedInput() throws Exception {
    var offsets = admin.listConsumerGroupOffsets(h.applicationId).partitionsToOffsetAndMetadata();
    return offsets.get().values().stream().mapToLong(o -> o.offset()).sum();
  }

  private boolean inputCommitted() throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < 4; p++) {
      latest.put(new TopicPartition(h.topics.webhooks(), p), OffsetSpec.latest());
    }
    var end = admin.listOffsets(latest).all().get().values().stream().mapToLong(i -> i.offset());
    return end.sum() == committedInput();
  }

  @AfterEach
  void stop() throws InterruptedException {
    for (Process p : children) {
      p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
    }
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
      h.close();
    }
  }

  private static ConditionFactory upTo(int seconds) {
    return await()
        .atMost(Duration.ofSeconds(seconds))
        .pollInterval(Duration.ofMillis(50))
        .ignoreExceptions();
  }

  /** Waits up to a minute for {@code condition}; false then, so the assertions say what is off. */
  private static boolean within(Callable<Boolean> condition) {
    try {
      upTo(60).until(condition);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  private static List<String> headers(ConsumerRecord<?, ?> r) {
    List<String> out = new ArrayList<>();
    r.headers()
        .forEach(h -> out.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8)));
    return out;
  }

  private static String id(ConsumerRecord<?, ?> r) {
    return new String(
        r.headers().lastHeader(RecordHeaders.REQUEST_ID).value(), StandardCharsets.UTF_8);
  }

  /** A processor JVM and its admin port. */
  private record Child(String name, Process process, int port) {
    /** The body of an admin endpoint; an IOException unless it answers 2xx. */
    String get(String path) throws IOException {
      try (var in = URI.create("http://127.0.0.1:" + port + path).toURL().openStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }

    /** The sum of the /metrics series {@code series} ("name label"), over its other labels. */
    double metric(String series) throws IOException {
      String[] nameAndLabel = series.split(" ");
      return get("/metrics")
          .lines()
          .filter(l -> l.startsWith(nameAndLabel[0] + "{") && l.contains(nameAndLabel[1]))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    }
  }

  /** The held store's changelog, read_committed: which input offsets it holds (D46). */
  private final class HeldLog implements AutoCloseable {
    private final Map<Long, Boolean> live = new HashMap<>(); // partition << 32 | offset
    private final KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of("bootstrap.servers", h.bootstrap, "isolation.level", "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    private final String topic = StoreNames.changelog(h.applicationId, StoreNames.HELD);

    HeldLog() {
      consumer.assign(IntStream.range(0, 4).mapToObj(p -> new TopicPartition(topic, p)).toList());
      consumer.seekToBeginning(consumer.assignment());
    }

    /** The committed entries, once read up to the last stable offset; null before. */
    Set<Long> committed() {
      for (var r : consumer.poll(Duration.ofMillis(100))) {
        live.put(
            (long) r.partition() << 32 | ByteBuffer.wrap(r.key()).getLong(), r.value() != null);
      }
      boolean caughtUp =
          consumer.endOffsets(consumer.assignment()).entrySet().stream()
              .allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
      return caughtUp ? live.keySet().stream().filter(live::get).collect(Collectors.toSet()) : null;
    }

    @Override
    public void close() {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }
}
