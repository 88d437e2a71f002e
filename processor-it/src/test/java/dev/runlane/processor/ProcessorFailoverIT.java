package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Processors as real processes ({@link ProcessorMain} in child JVMs on this test's classpath),
 * killed with SIGKILL ({@link Process#destroyForcibly()}) in the middle of their work: the other
 * instance takes the dead one's tasks, a third one joins and takes some, and the outputs, read
 * read_committed, are checked against what the input topic holds (G1-G3, design.md §2). Child logs
 * go to {@code target/failover-*.log}.
 */
@RealInfra
class ProcessorFailoverIT {
  private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  private static final Comparator<Event> NEWEST_LAST =
      Comparator.comparing(Event::createdAt).thenComparing(Event::requestId);

  /**
   * A and B share 12 tasks over two threads each (three tasks a thread); A is killed under load, B
   * takes its six tasks (six a thread, restored from the changelogs), then C joins on a fresh state
   * dir and takes some back, while the load goes on. The load is Sume's: many runs, each with
   * events of increasing created_at (pairs share one, so the request_id breaks the tie), retries of
   * earlier request_ids, copies sent concurrently by two producers, and older events sent after
   * newer ones.
   */
  @Test
  void aKilledInstancesTasksMoveToTheOtherAndAThirdRejoinsUnderLoad(Infra infra) throws Exception {
    int partitions = 12;
    try (Deployment d = new Deployment(infra, infra.uniqueName("failover"), partitions);
        TopicReader input = new TopicReader(d.bootstrap, d.webhooks, false);
        TopicReader events = new TopicReader(d.bootstrap, d.events, true);
        TopicReader stale = new TopicReader(d.bootstrap, d.stale, true);
        TopicReader runs = new TopicReader(d.bootstrap, d.runs, true);
        TopicReader dlq = new TopicReader(d.bootstrap, d.dlq, true)) {
      // Two threads an instance, so that every thread has several tasks. A second-long commit
      // interval: the kill then aborts a transaction holding up to a second of decisions.
      Map<String, String> settings =
          Map.of("PROCESSOR_THREADS", "2", "PROCESSOR_COMMIT_INTERVAL_MS", "1000");
      Map<String, Long> at = new LinkedHashMap<>(); // seconds since the start, by phase
      long start = System.nanoTime();
      Instance a = d.start("a", settings);
      Instance b = d.start("b", settings);
      d.awaitReady(a, Duration.ofSeconds(90));
      d.awaitReady(b, Duration.ofSeconds(90));
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> both(d.tasksByInstance(), "a", "b"));
      at.put("A and B running", seconds(start));

      try (Load load = new Load(d.bootstrap, d.webhooks, 300, 250, 7)) {
        load.start();
        // Both process: each has decided a share of the load.
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(250))
            .ignoreExceptions()
            .until(() -> a.decided() >= 300 && b.decided() >= 300);
        Map<String, List<Integer>> beforeKill = d.tasksByThread();
        // Killed while a transaction of A holds half a commit interval of decisions, not between
        // two transactions.
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> !d.openWithOutput(a, 2, Duration.ofMillis(500)).isEmpty());
        a.kill();
        long killedAt = System.nanoTime();
        at.put("A killed", seconds(start));
        long aDecided = (long) a.lastDecided;
        assertThat(a.process.exitValue()).as("A's exit code after SIGKILL").isEqualTo(137);
        Map<String, Set<TopicPartition>> openAtKill = d.openWithOutput(a, 2, Duration.ZERO);
        assertThat(openAtKill)
            .as("A's transactions left open by the kill, with their output partitions")
            .isNotEmpty();
        double bAtKill = b.decided();
        // B takes every task once A's session (6 s) has expired, and decides on them.
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(250))
            .until(() -> d.tasksByInstance().equals(Map.of("b", partitions)));
        Map<String, List<Integer>> afterKill = d.tasksByThread();
        at.put("B has every task", seconds(start));
        long takeoverMillis = (System.nanoTime() - killedAt) / 1_000_000;
        d.awaitReady(b, Duration.ofSeconds(60));
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(250))
            .ignoreExceptions()
            .until(() -> b.decided() >= bAtKill + 600);

        // C joins with no state at all, and takes tasks while the load goes on.
        Instance c = d.start("c", settings);
        await()
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(250))
            .until(() -> both(d.tasksByInstance(), "b", "c"));
        Map<String, List<Integer>> afterRejoin = d.tasksByThread();
        at.put("C has tasks", seconds(start));
        d.awaitReady(c, Duration.ofSeconds(60));
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(250))
            .ignoreExceptions()
            .until(() -> c.decided() >= 300);
        load.stop();
        at.put("load stopped", seconds(start));
        assertThat(load.error).as("the load generator's failure").isNull();

        Expected expected = Expected.fromInput(input.readToEnd(), load.events);
        assertThat(expected.records)
            .as("input records read back vs acked by the broker")
            .isGreaterThanOrEqualTo(load.acked.get());
        // Every request id decided: the input consumed and committed, and the outputs say so.
        boolean settled =
            within(
                Duration.ofSeconds(60),
                () ->
                    d.inputCommitted()
                        && events.caughtUp()
                        && stale.caughtUp()
                        && runs.caughtUp()
                        && expected.allListed(events, stale)
                        && expected.finalStatesReached(runs));
        at.put("settled", seconds(start));
        dlq.caughtUp();

        Map<String, Long> appliedTimes = counts(events.requestIds());
        List<String> appliedTwice =
            appliedTimes.entrySet().stream()
                .filter(e -> e.getValue() > 1)
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
        Set<String> listed = new HashSet<>(events.requestIds());
        listed.addAll(stale.requestIds());
        List<String> lost =
            expected.ids.stream().filter(id -> !listed.contains(id)).sorted().toList();
        Set<String> staleListed = new HashSet<>(stale.requestIds());
        long appliedAndStale = appliedTimes.keySet().stream().filter(staleListed::contains).count();
        long aborted = abortedRecords(d.bootstrap, d.events) + abortedRecords(d.bootstrap, d.stale);
        System.out.printf(
            "failover under load: %,d records produced (%,d acked, %,d sends failed): %,d distinct"
                + " request_ids over %d runs, %,d duplicate records (%,d retries, %,d concurrent"
                + " copies), %,d late (older after newer); %,d applied, %,d expected stale, %,d"
                + " stale records listed (%,d request_ids also applied); %,d output records in"
                + " aborted transactions; A decided %,d before the kill, its open transactions"
                + " then %s; tasks per thread before"
                + " the kill %s, after %s (B has all %d tasks %d ms after the kill), after C"
                + " joined %s; settled: %s; timeline (s) %s%n",
            expected.records,
            load.acked.get(),
            load.failed.get(),
            expected.ids.size(),
            expected.appliedByRun.size(),
            expected.records - expected.ids.size(),
            load.retries.get(),
            load.concurrent.get(),
            load.late.get(),
            expected.applied(),
            expected.stale.size(),
            stale.records.size(),
            appliedAndStale,
            aborted,
            aDecided,
            openAtKill,
            beforeKill,
            afterKill,
            partitions,
            takeoverMillis,
            afterRejoin,
            settled,
            at);

        assertThat(appliedTwice).as("request_ids applied more than once (G2)").isEmpty();
        assertThat(lost).as("request_ids neither applied nor stale (G1)").isEmpty();
        assertPerRunOrder(events.records, load.events);
        assertThat(byRun(events.records))
            .as("applied events per run: exactly those newest at arrival, in input order")
            .isEqualTo(expected.appliedByRun);
        assertThat(staleListed)
            .as("events older than their run at arrival, each listed stale at least once")
            .containsAll(expected.stale);
        Map<String, RunState> last = lastStates(runs.records);
        assertThat(last.keySet()).isEqualTo(expected.appliedByRun.keySet());
        expected.appliedByRun.forEach(
            (run, applied) -> {
              Event newest = expected.newestByRun.get(run);
              RunState state = last.get(run);
              assertThat(state.lastRequestId())
                  .as("last request_id of %s", run)
                  .isEqualTo(newest.requestId());
              assertThat(state.lastCreatedAt())
                  .as("last created_at of %s", run)
                  .isEqualTo(newest.createdAt());
              assertThat(state.appliedCount())
                  .as("applied_count of %s", run)
                  .isEqualTo(applied.size());
            });
        assertThat(dlq.records).as("dead-lettered records").isEmpty();
        assertThat(settled).as("every request_id decided within the deadline").isTrue();
      }
    }
  }

  /**
   * Stale events decided, listed, and marked {@code done:<task>:stale} in Redis, inside a
   * transaction that a SIGKILL then aborts (an 8 s commit interval keeps it open). The restarted
   * instance (a new JVM on the same state dir, as a restarted pod) reads Redis saying "decided" for
   * them, but the listing went with the transaction: it must decide and list them again (design.md
   * §2: the stale stream is at least once, never less), and no stale event may change a run. A
   * newer event in the same transaction is applied once, a duplicate of an applied one not at all.
   */
  @Test
  void staleEventsDecidedInATransactionThatAKillAbortsAreListedAfterTheRestart(Infra infra)
      throws Exception {
    int runCount = 40;
    try (Deployment d = new Deployment(infra, infra.uniqueName("stalekill"), 4);
        TopicReader events = new TopicReader(d.bootstrap, d.events, true);
        TopicReader stale = new TopicReader(d.bootstrap, d.stale, true);
        TopicReader runs = new TopicReader(d.bootstrap, d.runs, true);
        KafkaProducer<String, byte[]> producer = producer(d.bootstrap);
        redis.clients.jedis.RedisClient jedis =
            redis.clients.jedis.RedisClient.create(infra.redisUri())) {
      // Below the transaction timeout (10 s under exactly_once_v2), far above what the test needs
      // between seeing a commit and the kill.
      Map<String, String> settings =
          Map.of("PROCESSOR_THREADS", "1", "PROCESSOR_COMMIT_INTERVAL_MS", "8000");
      Path stateDir = d.stateDir("p");
      Instance p = d.start("p", stateDir, settings);
      d.awaitReady(p, Duration.ofSeconds(90));

      Map<String, Event> newest = new LinkedHashMap<>();
      for (int r = 0; r < runCount; r++) {
        Event e5 = event(r, 5);
        newest.put(e5.runId(), e5);
        send(producer, d.webhooks, e5);
      }
      producer.flush();
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> runs.caughtUp() && lastStates(runs.records).size() == runCount);
      // Seen committed: the next commit is about 8 s away. The input is committed as far as now.
      long commitSeen = System.nanoTime();
      Map<String, RunState> before = lastStates(runs.records);
      Map<TopicPartition, Long> inputEnd = d.inputEnd();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> d.committed().equals(inputEnd));

      List<Event> staleEvents = new ArrayList<>();
      List<Event> newer = new ArrayList<>();
      int batch = 0;
      for (int r = 0; r < runCount; r++) {
        for (int n = 1; n <= 3; n++) {
          Event older = event(r, n);
          staleEvents.add(older);
          send(producer, d.webhooks, older);
          batch++;
        }
        send(producer, d.webhooks, event(r, 2)); // a retry of a stale one
        send(producer, d.webhooks, newest.get(runId(r))); // a retry of the applied one
        batch += 2;
        if (r % 2 == 0) {
          Event e6 = event(r, 6);
          newer.add(e6);
          send(producer, d.webhooks, e6);
          batch++;
        }
      }
      producer.flush();
      int total = runCount + batch;
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptions()
          .until(() -> p.decided() == total);
      // The next drain (20 ms) writes the markers: Redis says "decided" while Kafka has not
      // committed, the case the decision table is built for.
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () ->
                  staleEvents.stream()
                      .allMatch(
                          e -> {
                            String v = jedis.get(d.keyPrefix + e.requestId());
                            return v != null && v.startsWith("done:");
                          }));
      long markedStale =
          staleEvents.stream()
              .filter(e -> jedis.get(d.keyPrefix + e.requestId()).endsWith(":stale"))
              .count();
      Map<String, Double> decidedBeforeKill = p.outcomes();

      p.kill();
      long commitToKillMillis = (System.nanoTime() - commitSeen) / 1_000_000;
      assertThat(p.process.exitValue()).as("exit code after SIGKILL").isEqualTo(137);
      assertThat(d.committed())
          .as("input offsets committed at the kill: the batch's transaction was still open")
          .isEqualTo(inputEnd);
      Map<String, Set<TopicPartition>> openAtKill = d.openWithOutput(p, 1, Duration.ZERO);
      assertThat(openAtKill.values().stream().flatMap(Set::stream).map(TopicPartition::topic))
          .as("topics of the transaction the kill left open")
          .contains(d.stale);
      long writtenBeforeKill = uncommittedCount(d.bootstrap, d.stale);

      // Whether the restart keeps the local run store (transactional stores, D19) or Streams wipes
      // it and restores it from the changelog, the outcome must be the same.
      Instance restarted = d.start("p-restarted", stateDir, settings);
      Set<String> staleIds = staleEvents.stream().map(Event::requestId).collect(Collectors.toSet());
      Set<String> newerIds = newer.stream().map(Event::requestId).collect(Collectors.toSet());
      boolean settled =
          within(
              Duration.ofSeconds(90),
              () ->
                  d.inputCommitted()
                      && stale.caughtUp()
                      && events.caughtUp()
                      && runs.caughtUp()
                      && new HashSet<>(stale.requestIds()).containsAll(staleIds)
                      && new HashSet<>(events.requestIds()).containsAll(newerIds));
      long aborted = abortedRecords(d.bootstrap, d.stale);
      System.out.printf(
          "stale events in an aborted transaction: %d runs, %d stale events (+%d retries of"
              + " them), %d newer events and %d retries of applied ones in the same transaction;"
              + " open at the kill %s; decided before the kill %s (%d of the stale ones marked"
              + " done:<task>:stale), killed %d ms after a commit was seen; stale records in the"
              + " log at the kill %d, in aborted transactions %d, listed after the restart %d;"
              + " settled: %s%n",
          runCount,
          staleEvents.size(),
          runCount,
          newer.size(),
          runCount,
          openAtKill,
          decidedBeforeKill,
          markedStale,
          commitToKillMillis,
          writtenBeforeKill,
          aborted,
          stale.records.size(),
          settled);

      assertThat(new HashSet<>(stale.requestIds()))
          .as("stale events listed after the abort (at least once)")
          .containsAll(staleIds);
      List<String> applied = events.requestIds();
      assertThat(applied).as("applied request_ids").doesNotHaveDuplicates();
      List<String> expectedApplied = new ArrayList<>();
      newest.values().forEach(e -> expectedApplied.add(e.requestId()));
      newer.forEach(e -> expectedApplied.add(e.requestId()));
      assertThat(applied)
          .as("applied: the first events, then the newer ones of the aborted transaction")
          .containsExactlyInAnyOrderElementsOf(expectedApplied);
      Map<String, RunState> after = lastStates(runs.records);
      for (int r = 0; r < runCount; r++) {
        String run = runId(r);
        if (r % 2 == 0) {
          assertThat(after.get(run).lastRequestId())
              .as("%s", run)
              .isEqualTo(event(r, 6).requestId());
          assertThat(after.get(run).appliedCount()).as("applied_count of %s", run).isEqualTo(2);
        } else {
          assertThat(after.get(run))
              .as("%s after stale events only", run)
              .isEqualTo(before.get(run));
        }
      }
      assertThat(restarted.queryRun(runId(1)))
          .as("the run store of the restarted JVM")
          .isEqualTo(before.get(runId(1)));
      assertThat(restarted.queryRun(runId(0)))
          .as("the run store of the restarted JVM")
          .isEqualTo(after.get(runId(0)));
      assertThat(settled).as("every request_id decided within the deadline").isTrue();
    }
  }

  // --- what the input says the outputs must be

  record Event(String runId, String requestId, Instant createdAt) {}

  /**
   * A run's n-th event. Two consecutive events share a created_at, and the request_id (numbered so
   * that its text order is its number's order) breaks the tie.
   */
  private static Event event(int run, int n) {
    return new Event(runId(run), String.format("r%03d-e%05d", run, n), T0.plusSeconds(n / 2));
  }

  private static String runId(int run) {
    return String.format("run-%03d", run);
  }

  /**
   * The outputs that exactly-once processing of the input topic, in its order, must give: an event
   * is applied if, at its first arrival, it is newer than everything before it in its run; else it
   * is stale. Later copies are duplicates (or listed stale again: at least once).
   */
  private static final class Expected {
    final Map<String, List<String>> appliedByRun = new TreeMap<>();
    final Map<String, Event> newestByRun = new HashMap<>();
    final Set<String> stale = new HashSet<>();
    final Set<String> ids = new HashSet<>();
    long records;

    static Expected fromInput(
        List<ConsumerRecord<String, byte[]>> input, Map<String, Event> produced) {
      Expected x = new Expected();
      for (ConsumerRecord<String, byte[]> r : input) { // in offset order within each partition
        x.records++;
        Event e = produced.get(header(r, RecordHeaders.REQUEST_ID));
        if (!x.ids.add(e.requestId())) {
          continue;
        }
        Event head = x.newestByRun.get(e.runId());
        if (head == null || NEWEST_LAST.compare(e, head) > 0) {
          x.newestByRun.put(e.runId(), e);
          x.appliedByRun.computeIfAbsent(e.runId(), k -> new ArrayList<>()).add(e.requestId());
        } else {
          x.stale.add(e.requestId());
        }
      }
      return x;
    }

    long applied() {
      return appliedByRun.values().stream().mapToLong(List::size).sum();
    }

    boolean allListed(TopicReader events, TopicReader stale) {
      Set<String> listed = new HashSet<>(events.requestIds());
      listed.addAll(stale.requestIds());
      return listed.containsAll(ids);
    }

    boolean finalStatesReached(TopicReader runs) {
      Map<String, RunState> last = lastStates(runs.records);
      return newestByRun.entrySet().stream()
          .allMatch(
              e ->
                  last.containsKey(e.getKey())
                      && last.get(e.getKey()).lastRequestId().equals(e.getValue().requestId()));
    }
  }

  private static void assertPerRunOrder(
      List<ConsumerRecord<String, byte[]>> applied, Map<String, Event> produced) {
    Map<String, Event> last = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : applied) {
      Event e = produced.get(header(r, RecordHeaders.REQUEST_ID));
      Event previous = last.put(r.key(), e);
      if (previous != null) {
        assertThat(NEWEST_LAST.compare(e, previous))
            .as("run %s moved backwards: %s after %s", r.key(), e, previous)
            .isPositive();
      }
    }
  }

  private static Map<String, List<String>> byRun(List<ConsumerRecord<String, byte[]>> records) {
    Map<String, List<String>> out = new TreeMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      out.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(header(r, RecordHeaders.REQUEST_ID));
    }
    return out;
  }

  private static Map<String, RunState> lastStates(List<ConsumerRecord<String, byte[]>> records) {
    Map<String, RunState> last = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      last.put(r.key(), RunStateJson.fromJson(r.value()));
    }
    return last;
  }

  private static Map<String, Long> counts(List<String> ids) {
    return ids.stream().collect(Collectors.groupingBy(id -> id, Collectors.counting()));
  }

  private static boolean both(Map<String, Integer> tasks, String first, String second) {
    return tasks.size() == 2
        && tasks.getOrDefault(first, 0) > 0
        && tasks.getOrDefault(second, 0) > 0;
  }

  private static long seconds(long sinceNanos) {
    return (System.nanoTime() - sinceNanos) / 1_000_000_000L;
  }

  /**
   * Waits for {@code condition}; false after {@code timeout}, so the assertions say what is off.
   */
  private static boolean within(Duration timeout, Callable<Boolean> condition) {
    try {
      await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(condition);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  private static String header(ConsumerRecord<?, ?> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /**
   * Records of {@code topic} in aborted transactions: all read uncommitted less those committed.
   */
  private static long abortedRecords(String bootstrap, String topic) {
    long all = uncommittedCount(bootstrap, topic);
    try (TopicReader committed = new TopicReader(bootstrap, topic, true)) {
      return all - committed.readToEnd().size();
    }
  }

  private static long uncommittedCount(String bootstrap, String topic) {
    try (TopicReader everything = new TopicReader(bootstrap, topic, false)) {
      return everything.readToEnd().size();
    }
  }

  // --- the input: Sume's traffic

  private static KafkaProducer<String, byte[]> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            true,
            ProducerConfig.LINGER_MS_CONFIG,
            5),
        new StringSerializer(),
        new ByteArraySerializer());
  }

  private static java.util.concurrent.Future<?> send(
      KafkaProducer<String, byte[]> producer, String topic, Event e) {
    return send(producer, topic, e, null);
  }

  private static java.util.concurrent.Future<?> send(
      KafkaProducer<String, byte[]> producer,
      String topic,
      Event e,
      org.apache.kafka.clients.producer.Callback callback) {
    ProducerRecord<String, byte[]> record =
        new ProducerRecord<>(
            topic,
            e.runId(),
            ProcessorHarness.event(e.runId(), e.requestId(), e.createdAt(), "run.updated"));
    record
        .headers()
        .add(RecordHeaders.REQUEST_ID, e.requestId().getBytes(StandardCharsets.UTF_8))
        .add(
            RecordHeaders.RECEIVED_AT,
            Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8));
    return producer.send(record, callback);
  }

  /**
   * A steady rate of webhooks over many runs, each run's events numbered upwards: mostly new
   * events, plus retries (a request_id sent before, recent or not), copies sent at the same moment
   * by two producers (two Sume deliveries racing), and pairs whose older event is held back and
   * sent a few to a few hundred records later (stale on arrival).
   */
  private static final class Load implements AutoCloseable {
    final Map<String, Event> events = new ConcurrentHashMap<>();
    final AtomicLong acked = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong concurrent = new AtomicLong();
    final AtomicLong late = new AtomicLong();
    volatile Throwable error;

    private final KafkaProducer<String, byte[]> first;
    private final KafkaProducer<String, byte[]> second;
    private final String topic;
    private final int runs;
    private final int perSecond;
    private final Random random;
    private final int[] nextEvent;
    private final List<Event> sent = new ArrayList<>();
    private final PriorityQueue<long[]> heldBack =
        new PriorityQueue<>(Comparator.comparingLong(x -> x[0]));
    private final Map<Long, Event> heldEvents = new HashMap<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Load(String bootstrap, String topic, int runs, int perSecond, long seed) {
      this.first = producer(bootstrap);
      this.second = producer(bootstrap);
      this.topic = topic;
      this.runs = runs;
      this.perSecond = perSecond;
      this.random = new Random(seed);
      this.nextEvent = new int[runs];
      this.thread = new Thread(this::run, "failover-load");
    }

    void start() {
      thread.start();
    }

    /** Stops sending and waits for every send to be answered. */
    void stop() throws InterruptedException {
      stop.set(true);
      thread.join(TimeUnit.SECONDS.toMillis(60));
      assertThat(thread.isAlive()).as("load generator still running").isFalse();
    }

    private void run() {
      try {
        long start = System.nanoTime();
        long step = 0;
        for (; !stop.get(); step++) {
          // Pacing the producer, not waiting for a condition.
          LockSupport.parkNanos(start + step * 1_000_000_000L / perSecond - System.nanoTime());
          while (!heldBack.isEmpty() && heldBack.peek()[0] <= step) {
            long[] due = heldBack.poll();
            Event older = heldEvents.remove(due[1]);
            send(first, older);
            late.incrementAndGet();
          }
          int run = random.nextInt(runs);
          double dice = random.nextDouble();
          if (dice < 0.12 && !sent.isEmpty()) {
            // A retry: mostly of a recent delivery, sometimes of one long ago.
            int from = random.nextBoolean() ? Math.max(0, sent.size() - 50) : 0;
            send(first, sent.get(from + random.nextInt(sent.size() - from)));
            retries.incrementAndGet();
          } else if (dice < 0.18) {
            Event e = next(run);
            send(first, e);
            send(second, e);
            concurrent.incrementAndGet();
          } else if (dice < 0.30) {
            Event older = next(run);
            Event newer = next(run);
            send(first, newer);
            heldEvents.put(step, older);
            heldBack.add(new long[] {step + 2 + random.nextInt(300), step});
          } else {
            send(first, next(run));
          }
        }
        first.flush();
        second.flush();
      } catch (Throwable t) {
        error = t;
      }
    }

    private Event next(int run) {
      Event e = event(run, nextEvent[run]++);
      events.put(e.requestId(), e);
      return e;
    }

    private void send(KafkaProducer<String, byte[]> producer, Event e) {
      sent.add(e);
      ProcessorFailoverIT.send(
          producer,
          topic,
          e,
          (metadata, ex) -> {
            if (ex == null) {
              acked.incrementAndGet();
            } else {
              failed.incrementAndGet();
            }
          });
    }

    @Override
    public void close() {
      stop.set(true);
      try {
        thread.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        // Kept for the test's thread to see; the producers are closed all the same.
        Thread.currentThread().interrupt();
      }
      first.close(Duration.ofSeconds(10));
      second.close(Duration.ofSeconds(10));
    }
  }

  // --- the processors

  /** One deployment's topics, application id, Redis namespace, and its instances. */
  private static final class Deployment implements AutoCloseable {
    final String bootstrap;
    final URI redisUri;
    final String name;
    final int partitions;
    final String webhooks;
    final String events;
    final String stale;
    final String runs;
    final String dlq;
    final String applicationId;
    final String keyPrefix;
    final Admin admin;
    private final List<Instance> instances = new ArrayList<>();

    Deployment(Infra infra, String name, int partitions) {
      this.bootstrap = infra.bootstrapServers();
      this.redisUri = infra.redisUri();
      this.name = name;
      this.partitions = partitions;
      this.webhooks = name + ".webhooks";
      this.events = name + ".events";
      this.stale = name + ".stale";
      this.runs = name + ".runs";
      this.dlq = name + ".dlq";
      this.applicationId = name + "-processor";
      this.keyPrefix = "test:" + name + ":";
      this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    Path stateDir(String instance) throws IOException {
      return Files.createDirectories(
          Path.of("target", "failover-state", name, instance).toAbsolutePath());
    }

    Instance start(String instance, Map<String, String> settings) throws IOException {
      return start(instance, stateDir(instance), settings);
    }

    /** Starts {@link ProcessorMain} in a JVM of its own; its log goes to target/. */
    Instance start(String instance, Path stateDir, Map<String, String> settings)
        throws IOException {
      int port = freePort();
      ProcessBuilder pb =
          new ProcessBuilder(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-Xmx256m",
              "-XX:+UseSerialGC",
              // Two busy cores: a cheap JIT starts faster, and this load needs no peak speed.
              "-XX:TieredStopAtLevel=1",
              "-cp",
              System.getProperty("java.class.path"),
              ProcessorMain.class.getName());
      Map<String, String> env = pb.environment();
      env.keySet()
          .removeIf(
              k ->
                  k.startsWith("KAFKA_")
                      || k.startsWith("REDIS_")
                      || k.startsWith("PROCESSOR_")
                      || k.startsWith("TOPIC_")
                      || k.startsWith("DEDUP_"));
      env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
      env.put("REDIS_URL", redisUri.toString());
      env.put("PROCESSOR_APPLICATION_ID", applicationId);
      env.put("PROCESSOR_STATE_DIR", stateDir.toString());
      env.put("PROCESSOR_PORT", Integer.toString(port));
      env.put("DEDUP_KEY_PREFIX", keyPrefix);
      env.put("TOPIC_WEBHOOKS", webhooks);
      env.put("TOPIC_EVENTS", events);
      env.put("TOPIC_STALE", stale);
      env.put("TOPIC_RUNS", runs);
      env.put("TOPIC_DLQ", dlq);
      env.put("TOPIC_PARTITIONS", Integer.toString(partitions));
      env.put("TOPIC_REPLICATION_FACTOR", "1");
      env.put("PROCESSOR_ROCKSDB_MEMORY_MB", "32");
      // Streams names its consumers "<client.id>-StreamThread-<n>-consumer": the group's members
      // then say which instance holds which tasks.
      env.put("KAFKA_CLIENT_CLIENT_ID", instance);
      env.putAll(settings);
      Path log = Path.of("target", "failover-" + name + "-" + instance + ".log");
      pb.redirectErrorStream(true).redirectOutput(log.toFile());
      Instance started = new Instance(instance, pb.start(), port, log, stateDir);
      instances.add(started);
      return started;
    }

    void awaitReady(Instance instance, Duration timeout) {
      await()
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(250))
          .until(
              () -> {
                assertThat(instance.process.isAlive())
                    .as("%s alive (log %s)", instance.name, instance.log)
                    .isTrue();
                return instance.status("/health/ready") == 200;
              });
    }

    /** Input partitions per instance, from the group's members. */
    Map<String, Integer> tasksByInstance() throws Exception {
      Map<String, Integer> out = new TreeMap<>();
      tasksByThread().forEach((k, v) -> out.put(k, v.stream().mapToInt(Integer::intValue).sum()));
      return out;
    }

    /** Input partitions of each stream thread, by instance. */
    Map<String, List<Integer>> tasksByThread() throws Exception {
      Map<String, List<Integer>> out = new TreeMap<>();
      var group =
          admin.describeConsumerGroups(List.of(applicationId)).all().get().get(applicationId);
      List<MemberDescription> members = new ArrayList<>(group.members());
      members.sort(Comparator.comparing(MemberDescription::clientId));
      for (MemberDescription m : members) {
        String id = m.clientId();
        int cut = id.indexOf("-StreamThread-");
        String instance = cut < 0 ? id : id.substring(0, cut);
        int n =
            (int)
                m.assignment().topicPartitions().stream()
                    .filter(tp -> tp.topic().equals(webhooks))
                    .count();
        out.computeIfAbsent(instance, k -> new ArrayList<>()).add(n);
      }
      return out;
    }

    Map<TopicPartition, Long> inputEnd() throws Exception {
      Map<TopicPartition, OffsetSpec> request = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        request.put(new TopicPartition(webhooks, p), OffsetSpec.latest());
      }
      Map<TopicPartition, Long> out = new HashMap<>();
      admin.listOffsets(request).all().get().forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    }

    /** The group's committed input offsets (those of open transactions not among them). */
    Map<TopicPartition, Long> committed() throws Exception {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin.listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata().get();
      Map<TopicPartition, Long> out = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        TopicPartition tp = new TopicPartition(webhooks, p);
        OffsetAndMetadata o = offsets.get(tp);
        out.put(tp, o == null ? 0L : o.offset());
      }
      return out;
    }

    /**
     * The transactions of {@code instance}'s stream threads (under exactly_once_v2 one
     * transactional id a thread: {@code <application.id>-<process id>-<thread>}) open for at least
     * {@code minAge}, with the output partitions they wrote to.
     */
    Map<String, Set<TopicPartition>> openWithOutput(Instance instance, int threads, Duration minAge)
        throws Exception {
      Path metadata =
          instance.stateDir.resolve(applicationId).resolve("kafka-streams-process-metadata");
      if (!Files.exists(metadata)) {
        return Map.of();
      }
      Matcher m =
          Pattern.compile("\"processId\"\\s*:\\s*\"([^\"]+)\"").matcher(Files.readString(metadata));
      assertThat(m.find()).as("process id in %s", metadata).isTrue();
      List<String> ids = new ArrayList<>();
      for (int t = 1; t <= threads; t++) {
        ids.add(applicationId + "-" + m.group(1) + "-" + t);
      }
      Set<String> outputs = Set.of(events, stale, runs, dlq);
      Map<String, Set<TopicPartition>> out = new TreeMap<>();
      var described = admin.describeTransactions(ids);
      for (String id : ids) {
        TransactionDescription t;
        try {
          t = described.description(id).get();
        } catch (java.util.concurrent.ExecutionException e) {
          continue; // a thread that has not produced yet has no transactional id on the broker
        }
        Set<TopicPartition> written =
            t.topicPartitions().stream()
                .filter(tp -> outputs.contains(tp.topic()))
                .collect(
                    Collectors.toCollection(
                        () ->
                            new java.util.TreeSet<>(
                                Comparator.comparing(TopicPartition::topic)
                                    .thenComparingInt(TopicPartition::partition))));
        // The broker runs on this machine (in this JVM, or a container): its clock is ours.
        boolean oldEnough =
            t.transactionStartTimeMs().orElse(Long.MAX_VALUE)
                <= System.currentTimeMillis() - minAge.toMillis();
        if (t.state() == TransactionState.ONGOING && !written.isEmpty() && oldEnough) {
          out.put(id.substring(id.length() - 1), written);
        }
      }
      return out;
    }

    /** Whether the group has committed the whole input. */
    boolean inputCommitted() throws Exception {
      return committed().equals(inputEnd());
    }

    @Override
    public void close() {
      for (Instance i : instances) {
        i.process.destroyForcibly();
      }
      for (Instance i : instances) {
        try {
          i.process.waitFor(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      admin.close(Duration.ofSeconds(5));
    }
  }

  /** A processor JVM and its admin port. */
  private static final class Instance {
    private static final HttpClient HTTP =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private static final Pattern EVENTS_LINE =
        Pattern.compile("^runlane_processor_events_total\\{(.*)\\}\\s+(\\S+)$", Pattern.MULTILINE);
    private static final Pattern OUTCOME = Pattern.compile("outcome=\"([^\"]*)\"");
    private static final Pattern LAYER = Pattern.compile("layer=\"([^\"]*)\"");

    final String name;
    final Process process;
    final int port;
    final Path log;
    final Path stateDir;

    /** What {@link #decided()} last answered. */
    volatile double lastDecided;

    Instance(String name, Process process, int port, Path log, Path stateDir) {
      this.name = name;
      this.process = process;
      this.port = port;
      this.log = log;
      this.stateDir = stateDir;
    }

    /** SIGKILL, and wait until the process is gone. */
    void kill() throws InterruptedException {
      process.destroyForcibly();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("%s gone after SIGKILL", name).isTrue();
    }

    int status(String path) {
      try {
        return get(path).statusCode();
      } catch (IOException e) {
        return -1; // not listening yet
      }
    }

    HttpResponse<byte[]> get(String path) throws IOException {
      try {
        return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
    }

    /** Events decided so far by outcome and layer ("applied/store"), from /metrics. */
    Map<String, Double> outcomes() throws IOException {
      HttpResponse<byte[]> r = get("/metrics");
      if (r.statusCode() != 200) {
        throw new IOException(name + " /metrics answered " + r.statusCode());
      }
      Map<String, Double> out = new TreeMap<>();
      Matcher m = EVENTS_LINE.matcher(new String(r.body(), StandardCharsets.UTF_8));
      while (m.find()) {
        Matcher outcome = OUTCOME.matcher(m.group(1));
        Matcher layer = LAYER.matcher(m.group(1));
        if (outcome.find() && layer.find()) {
          out.merge(
              outcome.group(1) + "/" + layer.group(1), Double.parseDouble(m.group(2)), Double::sum);
        }
      }
      return out;
    }

    /** Applied, duplicate and stale decisions so far. */
    double decided() throws IOException {
      return lastDecided =
          outcomes().entrySet().stream()
              .filter(
                  e ->
                      e.getKey().startsWith("applied/")
                          || e.getKey().startsWith("duplicate/")
                          || e.getKey().startsWith("stale/"))
              .mapToDouble(Map.Entry::getValue)
              .sum();
    }

    /**
     * The run's state from the query API, once the store answers (503 while it restores) and the
     * state is committed (404 until then, D44).
     */
    RunState queryRun(String runId) {
      HttpResponse<byte[]> response =
          await()
              .atMost(Duration.ofSeconds(30))
              .ignoreExceptions()
              .until(() -> get("/runs/" + runId), r -> r.statusCode() == 200);
      assertThat(response.statusCode()).as("/runs/%s", runId).isEqualTo(200);
      return RunStateJson.fromJson(response.body());
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Reads every partition of a topic from the start, keeping what it read across calls. */
  private static final class TopicReader implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    private final String topic;
    final List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();

    TopicReader(String bootstrap, String topic, boolean committedOnly) {
      this.topic = topic;
      this.consumer =
          new KafkaConsumer<>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  bootstrap,
                  ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                  committedOnly ? "read_committed" : "read_uncommitted",
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                  "earliest",
                  ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                  false,
                  ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                  5_000),
              new StringDeserializer(),
              new ByteArrayDeserializer());
    }

    private boolean assigned() {
      if (!consumer.assignment().isEmpty()) {
        return true;
      }
      var infos = consumer.partitionsFor(topic);
      if (infos == null || infos.isEmpty()) {
        return false;
      }
      var parts = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      return true;
    }

    /**
     * Reads on; true once every partition is read to its end (read_committed: its last stable
     * offset, everything committed so far).
     */
    boolean caughtUp() {
      if (!assigned()) {
        return false;
      }
      Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
      while (!end.entrySet().stream()
          .allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
        long before = positions();
        var polled = consumer.poll(Duration.ofMillis(100));
        if (polled.isEmpty() && positions() == before) {
          return false; // nothing to read yet: the writer's transaction is still open
        }
        polled.forEach(records::add);
      }
      return true;
    }

    private long positions() {
      return consumer.assignment().stream().mapToLong(consumer::position).sum();
    }

    List<ConsumerRecord<String, byte[]>> readToEnd() {
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ZERO).until(this::caughtUp);
      return records;
    }

    List<String> requestIds() {
      return records.stream().map(r -> header(r, RecordHeaders.REQUEST_ID)).toList();
    }

    @Override
    public void close() {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }
}
