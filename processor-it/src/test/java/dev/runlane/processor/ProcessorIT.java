package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.StoreNames;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The processor on the real broker and a real Redis, through the topics. */
@RealInfra
class ProcessorIT {
  private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

  @Test
  void seedsExerciseAppliesOnceAcrossConcurrencyAndARedisRestart(Infra infra) throws Exception {
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned();
        ProcessorHarness h = ProcessorHarness.unique(infra, redis, "seed").start();
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader runs = h.new Reader(h.topics.runs())) {
      ExecutorService pool = Executors.newFixedThreadPool(5);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> sends = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        sends.add(
            pool.submit(
                () -> {
                  go.await();
                  h.send("run-seed", "req-seed", T0);
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : sends) {
        f.get();
      }
      pool.shutdown();
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(h) == 5);

      redis.restart(); // no persistence: every dedup key is gone
      for (int i = 1; i <= 3; i++) {
        h.send("run-seed", "req-seed", T0);
        int expected = 5 + i;
        await().atMost(Duration.ofSeconds(30)).until(() -> decided(h) == expected);
      }

      assertThat(h.count("applied", "store")).isEqualTo(1);
      double byRedis = h.count("duplicate", "redis");
      double byStore = h.count("duplicate", "store");
      assertThat(byRedis + byStore).isEqualTo(7);
      assertThat(byRedis)
          .as("concurrent copies caught by the Redis claim")
          .isGreaterThanOrEqualTo(4);
      assertThat(byStore).as("first copy after Redis lost its keys").isGreaterThanOrEqualTo(1);
      await().atMost(Duration.ofSeconds(10)).until(() -> !events.poll().isEmpty());
      events.poll();
      assertThat(events.requestIds()).containsExactly("req-seed");
      await().atMost(Duration.ofSeconds(10)).until(() -> !runs.poll().isEmpty());
      RunState state = RunStateJson.fromJson(runs.records.get(runs.records.size() - 1).value());
      assertThat(state.appliedCount()).isEqualTo(1);
      assertThat(scrape(h)).contains("runlane_processor_events_total").contains("layer=\"store\"");
      // The gauge that crashed a JVM when read while its store closed is not exposed, though
      // Streams has it (D109).
      StreamsWithSafeMetrics streams = (StreamsWithSafeMetrics) h.app.streams();
      assertThat(streams.allMetrics().keySet())
          .anyMatch(m -> m.name().equals(StreamsWithSafeMetrics.UNSAFE_GAUGE));
      assertThat(streams.metrics().keySet())
          .noneMatch(m -> m.name().equals(StreamsWithSafeMetrics.UNSAFE_GAUGE));
      assertThat(scrape(h)).doesNotContain("uncommitted_bytes");
    }
  }

  @Test
  void olderEventsArrivingLateAreStaleAndResendingChangesNothing(Infra infra) throws Exception {
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "order").start();
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale())) {
      Instant t1 = T0.plusSeconds(1);
      Instant t2 = T0.plusSeconds(2);
      Instant t3 = T0.plusSeconds(3);
      h.send("run-o", "req-3", t3);
      h.send("run-o", "req-1", t1);
      h.send("run-o", "req-2", t2);
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(h) == 3);

      RunState state = queryRun(h, "run-o");
      assertThat(state.lastRequestId()).isEqualTo("req-3");
      assertThat(state.lastCreatedAt()).isEqualTo(t3);
      await().atMost(Duration.ofSeconds(10)).until(() -> stale.poll().size() == 2);
      assertThat(stale.requestIds()).containsExactly("req-1", "req-2");

      h.send("run-o", "req-3", t3);
      h.send("run-o", "req-1", t1);
      h.send("run-o", "req-2", t2);
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(h) == 6);
      // The applied one is a Redis duplicate. The stale ones are listed stale again: their markers
      // say stale, and this task cannot tell a committed listing from one whose transaction
      // aborted, so the audit stream stays at least once (D40).
      assertThat(h.count("duplicate", "redis")).isEqualTo(1);
      assertThat(h.count("stale", "store")).isEqualTo(4);
      await().atMost(Duration.ofSeconds(10)).until(() -> stale.poll().size() == 4);
      events.poll();
      assertThat(events.requestIds()).containsExactly("req-3");
      assertThat(queryRun(h, "run-o")).isEqualTo(state);
      assertThat(queryStatus(h, "no-such-run")).isEqualTo(404);
    }
  }

  /**
   * Both ways a crashed task comes back: with transactional stores (the default) it keeps its
   * committed RocksDB state; without, it is wiped and restored from its changelog (D19).
   */
  @ParameterizedTest(name = "transactional state stores: {0}")
  @ValueSource(booleans = {true, false})
  void aCrashBetweenTheRedisDoneAndTheKafkaCommitNeitherLosesNorDoubles(
      boolean transactionalStores, Infra infra) throws Exception {
    AtomicInteger crashes = new AtomicInteger();
    AtomicLong crashedAt = new AtomicLong();
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "crash");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.with("PROCESSOR_TRANSACTIONAL_STATE_STORES", Boolean.toString(transactionalStores));
      // The done marker is written at most a drain (20 ms) after the decision (D22, D45): with a
      // 5 s commit interval the crash almost always comes before the commit; if a commit falls in
      // between, there is no second decision and the wait below times out instead of passing.
      h.with("PROCESSOR_COMMIT_INTERVAL_MS", "5000");
      h.start(
          ids -> {
            if (ids.contains("req-crash") && crashes.getAndIncrement() == 0) {
              crashedAt.set(System.nanoTime());
              throw new IllegalStateException("injected crash after done, before commit");
            }
          });
      h.send("run-c", "req-crash", T0);

      // Decided once before the crash, whose transaction aborts, and once after: the run store
      // rolled back, so the done marker of this task does not make the retry a duplicate.
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> crashes.get() >= 1 && h.count("applied", "store") == 2);
      long recoveryMillis = (System.nanoTime() - crashedAt.get()) / 1_000_000;
      System.out.printf("recovery after stream-thread crash: %d ms%n", recoveryMillis);
      try (redis.clients.jedis.RedisClient jedis =
          redis.clients.jedis.RedisClient.create(h.redisUri)) {
        assertThat(jedis.get(h.keyPrefix + "req-crash")).startsWith("done:");
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> !events.poll().isEmpty());
      h.send("run-c", "req-after", T0.plusSeconds(1)); // a marker: everything before it is out
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 2);
      assertThat(events.requestIds()).containsExactly("req-crash", "req-after");
      assertThat(queryRun(h, "run-c").appliedCount()).isEqualTo(2);
    }
  }

  /**
   * A Kafka timeout in a drain (a punctuator) under exactly-once does not kill the stream thread:
   * Streams marks the task corrupted and rebuilds it on the same thread. Measured here (Kafka
   * Streams 4.4.0): the rebuilt task gets a new processor, so its cache of run heads (D33) starts
   * empty, and the event the failed drain applied is neither lost nor applied again.
   */
  @Test
  void aKafkaTimeoutInADrainRebuildsTheTaskWithoutLosingOrDoublingTheEvent(Infra infra)
      throws Exception {
    AtomicInteger timeouts = new AtomicInteger();
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "revive");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.with("PROCESSOR_COMMIT_INTERVAL_MS", "5000"); // the timeout comes before the commit
      // One task, so the task that throws is the one that applied the event. With more, another
      // task's drain may carry the event's marker (D45) and throw instead.
      h.with("TOPIC_PARTITIONS", "1");
      h.start(
          ids -> {
            if (ids.contains("req-revive") && timeouts.getAndIncrement() == 0) {
              throw new org.apache.kafka.common.errors.TimeoutException(
                  "injected timeout after done, before commit");
            }
          });
      Set<String> threads = streamThreads(h);
      h.send("run-r", "req-revive", T0);
      await().atMost(Duration.ofSeconds(30)).until(() -> timeouts.get() >= 1);

      h.send("run-r", "req-after", T0.plusSeconds(1)); // a marker: everything before it is out
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 2);
      assertThat(events.requestIds()).containsExactly("req-revive", "req-after");
      assertThat(queryRun(h, "run-r").appliedCount()).isEqualTo(2);
      assertThat(h.count("applied", "store")).isEqualTo(2);
      assertThat(streamThreads(h)).as("rebuilt in place, not a replaced thread").isEqualTo(threads);
    }
  }

  private static Set<String> streamThreads(ProcessorHarness h) {
    Set<String> names = new HashSet<>();
    h.app.streams().metadataForLocalThreads().forEach(t -> names.add(t.threadName()));
    return names;
  }

  /**
   * Streams never leaves its group on close, so a processor restarted under a new member id waits
   * out the old member's session before it gets its tasks. With a group instance id (a StatefulSet
   * pod's name) the restarted processor takes them back at once (D29): here the session is two
   * minutes and the restart applies new input within 30 s.
   */
  @Test
  void aRestartWithTheSameGroupInstanceIdDoesNotWaitOutTheSession(Infra infra) throws Exception {
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "static");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      h.with("PROCESSOR_GROUP_INSTANCE_ID", "processor-0")
          .with("PROCESSOR_SESSION_TIMEOUT_MS", "120000");
      h.start();
      h.send("run-s", "req-before", T0);
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 1);
      h.stop();

      long restart = System.nanoTime();
      h.start();
      h.send("run-s", "req-after", T0.plusSeconds(1));
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 2);
      System.out.printf(
          "restart with the same group instance id: new input applied after %d ms%n",
          (System.nanoTime() - restart) / 1_000_000);
      assertThat(events.requestIds()).containsExactly("req-before", "req-after");
    }
  }

  /**
   * A static member stays in its group on close unless told to leave (D102): with {@code
   * PROCESSOR_SHUTDOWN_LEAVES_GROUP=true}, a SIGTERMed processor's partitions go to the other
   * instance at once instead of after its 40 s session, so a roll whose successor starts slower
   * than the session timeout pauses them for a rebalance, not for the whole start.
   */
  @Test
  void aStaticMemberThatLeavesOnShutdownHandsItsPartitionsOverAtOnce(Infra infra) throws Exception {
    String name = infra.uniqueName("leaves");
    try (ProcessorHarness a = new ProcessorHarness(infra, name);
        ProcessorHarness b = new ProcessorHarness(infra, name);
        ProcessorHarness.Reader events = a.new Reader(a.topics.events())) {
      for (ProcessorHarness h : List.of(a, b)) {
        h.with("PROCESSOR_SESSION_TIMEOUT_MS", "40000")
            .with("PROCESSOR_SHUTDOWN_LEAVES_GROUP", "true");
      }
      a.with("PROCESSOR_GROUP_INSTANCE_ID", "processor-a").start();
      b.with("PROCESSOR_GROUP_INSTANCE_ID", "processor-b").start();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  activeTasks(a) > 0 && activeTasks(b) > 0 && activeTasks(a) + activeTasks(b) == 3);
      a.stop();

      List<String> sent = new ArrayList<>();
      for (int r = 0; r < 12; r++) { // four runs on each of the three partitions, or near it
        b.send("run-leave-" + r, "req-leave-" + r, T0);
        sent.add("req-leave-" + r);
      }
      // Within the 40 s session: without the leave, the partitions would wait it out.
      await().atMost(Duration.ofSeconds(25)).until(() -> events.poll().size() >= sent.size());
      assertThat(events.requestIds()).containsExactlyInAnyOrderElementsOf(sent);
    }
  }

  /**
   * A SIGTERM stops deciding at once: the thread finishes the task and the drain it is in, and the
   * records it fetched but had not reached are left, uncommitted, to its successor. Before, the
   * thread ran through every fetched record first (up to a poll's 1,000), which was most of a
   * rolling update's pause under load (D102, D108). Decisions are slowed to 2 ms each by the fault
   * hook, so that the close lands early; none is lost or applied twice across the hand-over. The
   * count starts at the pause, not at close(), which first waits for a follower check in progress.
   */
  @Test
  void aShutdownStopsDecidingAtOnceAndItsSuccessorDecidesTheRest(Infra infra) throws Exception {
    String name = infra.uniqueName("prompt-stop");
    int total = 3_000;
    AtomicInteger decided = new AtomicInteger();
    AtomicInteger decidedAfterPause = new AtomicInteger();
    AtomicReference<KafkaStreams> streams = new AtomicReference<>();
    FaultHook slow =
        new FaultHook() {
          @Override
          public void afterMarkDone(Collection<String> requestIds) {}

          @Override
          public void beforeDecide(String requestId) {
            LockSupport.parkNanos(Duration.ofMillis(2).toNanos()); // a slow decision, not a wait
            decided.incrementAndGet();
            KafkaStreams s = streams.get();
            if (s != null && s.isPaused()) {
              decidedAfterPause.incrementAndGet();
            }
          }
        };
    try (ProcessorHarness first = new ProcessorHarness(infra, name);
        ProcessorHarness successor = new ProcessorHarness(infra, name);
        ProcessorHarness.Reader events = first.new Reader(first.topics.events())) {
      for (ProcessorHarness h : List.of(first, successor)) {
        h.with("PROCESSOR_SHUTDOWN_LEAVES_GROUP", "true"); // no session timeout to wait out
      }
      first.start().stop(); // creates the topics, so the input can be written before the run
      List<Future<?>> acked = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        acked.add(first.sendAsync("run-stop-" + i, "req-stop-" + i, T0, ""));
      }
      for (Future<?> f : acked) {
        f.get();
      }
      first.start(slow);
      streams.set(first.app.streams());
      await().atMost(Duration.ofSeconds(60)).until(() -> decided.get() > 0);
      first.stop();
      assertThat(streams.get().isPaused()).as("the close paused Streams first").isTrue();
      // Unpaused, the thread went on through the whole poll: 872 decisions after close().
      assertThat(decidedAfterPause.get()).as("decisions after the pause").isLessThan(100);
      assertThat(decided.get()).isLessThan(total);

      successor.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> events.poll().size() >= total);
      await().pollDelay(Duration.ofSeconds(1)).until(events::caughtUp);
      assertThat(events.requestIds()).hasSize(total).doesNotHaveDuplicates();
    }
  }

  private static int activeTasks(ProcessorHarness h) {
    int n = 0;
    for (var thread : h.app.streams().metadataForLocalThreads()) {
      n += thread.activeTasks().size();
    }
    return n;
  }

  @Test
  void tenThousandEventsWithDuplicatesAndReorderingAcrossTwoRestarts(Infra infra) throws Exception {
    Random random = new Random(42);
    int runs = 1000;
    Map<String, String> newestByRun = new HashMap<>();
    List<String[]> unique = new ArrayList<>(); // {run, request id, created_at}
    for (int r = 0; r < runs; r++) {
      String run = "run-" + r;
      for (int e = 0; e < 7; e++) {
        String id = run + "-req-" + e;
        unique.add(new String[] {run, id, T0.plusSeconds(e).toString()});
        newestByRun.put(run, id);
      }
    }
    // Interleave runs, and swap 20% of events with the next event of the same run.
    List<String[]> sequence;
    sequence = orderPerRunWithSwaps(unique, random, 0.2);
    List<String[]> withDuplicates = new ArrayList<>(sequence);
    for (int i = 0; i < 3000; i++) {
      String[] copy = sequence.get(random.nextInt(sequence.size()));
      int at = random.nextInt(withDuplicates.size() + 1);
      withDuplicates.add(at, copy);
    }
    assertThat(withDuplicates).hasSize(10_000);

    try (ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), infra.redisUri(), infra.uniqueName("soak"), 256);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale());
        ProcessorHarness.Reader states = h.new Reader(h.topics.runs())) {
      List<Double> decidedBefore = new ArrayList<>();
      h.start();
      for (int i = 0; i < withDuplicates.size(); i++) {
        if (i == 3333 || i == 6666) {
          h.producer.flush();
          h.stop(); // a graceful stop commits; the next generation reads on from there
          decidedBefore.add(decided(h));
          h.start();
        }
        String[] e = withDuplicates.get(i);
        h.producer.send(
            new ProducerRecord<>(
                h.topics.webhooks(),
                null,
                e[0],
                ProcessorHarness.event(e[0], e[1], Instant.parse(e[2]), "run.updated"),
                List.of(
                    new org.apache.kafka.common.header.internals.RecordHeader(
                        "request_id", e[1].getBytes(java.nio.charset.StandardCharsets.UTF_8)))));
      }
      h.producer.flush();
      double earlier = decidedBefore.stream().mapToDouble(Double::doubleValue).sum();
      await().atMost(Duration.ofSeconds(120)).until(() -> earlier + decided(h) >= 10_000);

      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                events.poll();
                stale.poll();
                Set<String> seen = new HashSet<>(events.requestIds());
                seen.addAll(stale.requestIds());
                return seen.size() == unique.size();
              });
      List<String> applied = events.requestIds();
      assertThat(applied).doesNotHaveDuplicates();
      Set<String> appliedSet = new HashSet<>(applied);
      assertThat(stale.requestIds()).noneMatch(appliedSet::contains);
      assertPerRunOrder(events.records);

      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                Map<String, RunState> last = lastStates(states.poll());
                return newestByRun.entrySet().stream()
                    .allMatch(
                        x ->
                            last.containsKey(x.getKey())
                                && last.get(x.getKey()).lastRequestId().equals(x.getValue()));
              });
    }
  }

  /**
   * Run states alone outgrow the stream thread's 10 MiB record cache here (3,000 runs of ~6 KB).
   * The pending store must still keep its entries in that cache until they are decided (D20), and
   * an event decided before the next commit (batch size 1: in the {@code process()} call that
   * parked it) must leave nothing in the pending changelog: no body, and no tombstone for a key the
   * changelog never had (D30).
   */
  @Test
  void pendingChangelogGetsNothingForEventsDecidedBeforeACommit(Infra infra) throws Exception {
    int runs = 3_000;
    String padding = "p".repeat(6_000);
    long cacheBytes =
        (Long)
            StreamsConfig.configDef()
                .defaultValues()
                .get(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);
    assertThat((long) runs * padding.length())
        .as("run states must outgrow the record cache for this test to mean anything")
        .isGreaterThan(cacheBytes * 3 / 2);
    try (ProcessorHarness h =
            new ProcessorHarness(
                    infra.bootstrapServers(),
                    EmbeddedRedis.shared().uri(),
                    infra.uniqueName("cache"),
                    1)
                .start();
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader pending =
            h.new Reader(StoreNames.changelog(h.applicationId, StoreNames.PENDING))) {
      for (int i = 0; i < runs; i++) {
        h.sendAsync("run-" + i, "req-" + i, T0, padding);
      }
      h.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> decided(h) == runs);
      // Every decision's output is committed, and with it whatever the pending store logged.
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= runs);
      await().atMost(Duration.ofSeconds(30)).until(pending::caughtUp);

      assertThat(h.count("applied", "store")).isEqualTo(runs);
      assertThat(pending.records).as("pending changelog records").isEmpty();
    }
  }

  /**
   * The other half of the pending store's logging rule (D30): an event still parked at a commit is
   * logged with its body, and once it is decided its tombstone follows, so that a restart does not
   * bring it back. Another task's claim holds it parked across commits here (D6) until the test
   * lets the claim go.
   */
  @Test
  void anEventParkedAcrossACommitIsLoggedAndItsDeleteToo(Infra infra) throws Exception {
    try (ProcessorHarness h =
            new ProcessorHarness(
                    infra.bootstrapServers(), infra.redisUri(), infra.uniqueName("parked"), 256)
                .start();
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader pending =
            h.new Reader(StoreNames.changelog(h.applicationId, StoreNames.PENDING));
        redis.clients.jedis.RedisClient jedis =
            redis.clients.jedis.RedisClient.create(h.redisUri)) {
      jedis.set(h.keyPrefix + "req-parked", "processing:9_9");
      h.send("run-p", "req-parked", T0);
      await().atMost(Duration.ofSeconds(30)).until(() -> pending.poll().size() >= 1);
      assertThat(events.poll()).as("applied while another task held the claim").isEmpty();

      jedis.del(h.keyPrefix + "req-parked"); // the other task's claim expires
      await().atMost(Duration.ofSeconds(30)).until(() -> events.poll().size() >= 1);
      await().atMost(Duration.ofSeconds(30)).until(() -> pending.poll().size() >= 2);

      assertThat(pending.records).hasSize(2);
      assertThat(pending.records.get(1).key()).isEqualTo(pending.records.get(0).key());
      assertThat(pending.records.get(0).value()).as("the parked event's body").isNotNull();
      assertThat(pending.records.get(1).value()).as("its tombstone").isNull();
      assertThat(events.requestIds()).containsExactly("req-parked");
    }
  }

  @Test
  void redisStoppedMidStreamKeepsProcessingWithoutDoubleApplies(Infra infra) throws Exception {
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned();
        ProcessorHarness h = ProcessorHarness.unique(infra, redis, "noredis").start();
        ProcessorHarness.Reader events = h.new Reader(h.topics.events())) {
      for (int i = 0; i < 50; i++) {
        h.send("run-" + (i % 10), "req-" + i, T0.plusSeconds(i));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> decided(h) == 50);

      redis.stop();
      for (int i = 0; i < 50; i++) { // every event again, then 50 new ones
        h.send("run-" + (i % 10), "req-" + i, T0.plusSeconds(i));
      }
      for (int i = 50; i < 100; i++) {
        h.send("run-" + (i % 10), "req-" + i, T0.plusSeconds(i));
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> decided(h) == 150);

      assertThat(h.registry.find("runlane.processor.degraded.decisions").counter().count())
          .isGreaterThan(0);
      assertThat(h.count("applied", "store")).isEqualTo(100);
      await().atMost(Duration.ofSeconds(10)).until(() -> events.poll().size() >= 100);
      assertThat(events.requestIds()).hasSize(100).doesNotHaveDuplicates();
    }
  }

  // --- helpers

  private static double decided(ProcessorHarness h) {
    return h.count("applied", "store")
        + h.count("duplicate", "redis")
        + h.count("duplicate", "store")
        + h.count("stale", "store");
  }

  private static List<String[]> orderPerRunWithSwaps(
      List<String[]> unique, Random random, double swapShare) {
    // Round-robin over runs so runs interleave; within a run, swap neighbours now and then.
    Map<String, List<String[]>> byRun = new java.util.LinkedHashMap<>();
    for (String[] e : unique) {
      byRun.computeIfAbsent(e[0], k -> new ArrayList<>()).add(e);
    }
    for (List<String[]> events : byRun.values()) {
      for (int i = 0; i + 1 < events.size(); i++) {
        if (random.nextDouble() < swapShare) {
          Collections.swap(events, i, i + 1);
          i++;
        }
      }
    }
    List<String[]> out = new ArrayList<>();
    List<java.util.Iterator<String[]>> its = new ArrayList<>();
    byRun.values().forEach(l -> its.add(l.iterator()));
    boolean any = true;
    while (any) {
      any = false;
      for (var it : its) {
        if (it.hasNext()) {
          out.add(it.next());
          any = true;
        }
      }
    }
    return out;
  }

  private static void assertPerRunOrder(List<ConsumerRecord<String, byte[]>> applied) {
    Map<String, String[]> last = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : applied) {
      String id =
          new String(
              r.headers().lastHeader("request_id").value(),
              java.nio.charset.StandardCharsets.UTF_8);
      String created = id.substring(id.lastIndexOf('-') + 1);
      String[] previous = last.put(r.key(), new String[] {created, id});
      if (previous != null) {
        assertThat(Integer.parseInt(created))
            .as("run %s moved backwards", r.key())
            .isGreaterThan(Integer.parseInt(previous[0]));
      }
    }
  }

  private static Map<String, RunState> lastStates(List<ConsumerRecord<String, byte[]>> records) {
    Map<String, RunState> last = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      last.put(r.key(), RunStateJson.fromJson(r.value()));
    }
    return last;
  }

  /**
   * The run's state from the query API, once the store answers (503 while it restores) and its
   * state is committed (404 until then: the API reads committed state, D44).
   */
  static RunState queryRun(ProcessorHarness h, String runId) {
    HttpResponse<byte[]> response =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> h.get("/runs/" + runId), r -> r.statusCode() == 200);
    assertThat(response.statusCode()).isEqualTo(200);
    return RunStateJson.fromJson(response.body());
  }

  private static int queryStatus(ProcessorHarness h, String runId) throws Exception {
    return h.get("/runs/" + runId).statusCode();
  }

  private static String scrape(ProcessorHarness h) throws Exception {
    return new String(h.get("/metrics").body(), java.nio.charset.StandardCharsets.UTF_8);
  }
}
