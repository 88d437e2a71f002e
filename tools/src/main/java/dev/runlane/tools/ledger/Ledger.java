package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.Refused;
import dev.runlane.tools.generation.Pipeline;
import dev.runlane.tools.kafka.Changelogs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code runlane audit}, the ledger (D88): per input partition of the running generation, every
 * input record up to the committed offset has exactly one decision in the decision log, and every
 * decision that wrote has its record: applied and released in the events topic, stale in the stale
 * topic, reused, dead-lettered and invalid in the DLQ; a held one is released or still held. With
 * the sink configured, every applied event the sink has read past has its row (D94, {@link
 * SinkCheck}).
 *
 * <p>The committed offsets are read first: the decisions and outputs read after them cover them at
 * least, as a transaction commits the offsets with its decisions and outputs.
 */
public final class Ledger {
  /** One record that is not accounted for, and why. */
  public record Unaccounted(String input, String runId, String requestId, String why) {
    @Override
    public String toString() {
      return input + " run_id=" + runId + " request_id=" + requestId + ": " + why;
    }
  }

  /**
   * One input partition's balance.
   *
   * @param committed the group's committed offset, where the audit stops, or -1 with none
   */
  public record Balance(
      int partition,
      long from,
      long committed,
      long received,
      Map<Decision.Outcome, Long> decided,
      long stillHeld,
      long unaccounted) {}

  /**
   * The whole ledger of one generation.
   *
   * @param since the oldest input record audited (by its timestamp), or null for all
   * @param floor why {@code since} is later than asked: a topic's retention, or null
   * @param sink the sink's balance, or null without the sink configured (D94)
   */
  public record Result(
      Generation generation,
      Instant since,
      String floor,
      List<Balance> partitions,
      List<Unaccounted> unaccounted,
      long unaccountedCount,
      SinkCheck.Balance sink) {
    public boolean balanced() {
      return unaccountedCount == 0;
    }
  }

  /**
   * Kafka's default {@code log.retention.hours} (168), assumed for a topic whose retention is the
   * broker's: the tools cannot read broker configs without more rights than they need.
   */
  static final String KAFKA_DEFAULT_RETENTION_MS = Long.toString(Duration.ofDays(7).toMillis());

  /** How long the audit asks again for a committed offset missing from the answer. */
  static final Duration COMMITTED_PATIENCE = Duration.ofSeconds(5);

  /** How many unaccounted records a result names; the rest are counted. */
  static final int NAMED = 20;

  private final Pipeline pipeline;
  private final DecisionLogSettings log;
  private final SinkConfig sink;

  public Ledger(Pipeline pipeline, DecisionLogSettings log) {
    this(pipeline, log, null);
  }

  /**
   * @param sink the sink's settings: its rows are part of the ledger (D94); null without a sink
   */
  public Ledger(Pipeline pipeline, DecisionLogSettings log, SinkConfig sink) {
    this.pipeline = pipeline;
    this.log = log;
    this.sink = sink;
  }

  /** The ledger of the generation that runs, of input records received since {@code since}. */
  public Result audit(Instant since) {
    Generation g = pipeline.latest();
    if (g.state() != Generation.State.ACTIVE) {
      throw new Refused(
          "generation "
              + g.number()
              + " is "
              + g.state()
              + ": a procedure is moving the pipeline; audit once it is ACTIVE");
    }
    int partitions = pipeline.cluster().partitions(g.input()).orElse(0);
    if (partitions == 0 || pipeline.cluster().partitions(log.topic()).isEmpty()) {
      throw new Refused(
          "nothing to audit: the input "
              + g.input()
              + " or the decision log "
              + log.topic()
              + " does not exist (DECISION_LOG=off?)");
    }
    Map<Integer, Long> committed = committed(g, partitions);
    Map<String, List<Decision>> decisions = decisions(g);
    Outputs outputs =
        Outputs.read(pipeline.clientSettings(), pipeline.config().topics(), sink != null);
    Since audited = auditedSince(since);
    Map<Integer, Long> from =
        audited.at() == null
            ? pipeline.cluster().startOffsets(g.input(), partitions)
            : pipeline.cluster().offsetsAt(g.input(), partitions, audited.at());
    Map<Integer, Long> to = new TreeMap<>();
    for (int p = 0; p < partitions; p++) {
      to.put(p, committed.containsKey(p) ? Math.max(from.get(p), committed.get(p)) : -1);
    }
    if (sink == null) {
      return balance(g, audited.at(), audited.floor(), decisions, outputs, from, to, null);
    }
    try (SinkRows rows = SinkRows.open(sink)) {
      return balance(g, audited.at(), audited.floor(), decisions, outputs, from, to, rows);
    }
  }

  /**
   * The group's committed offsets on the input. A partition with records and no committed offset is
   * asked again for a few seconds: an offset a transaction is committing right then can be left out
   * of the answer, and audited as "nothing committed" it would make the ledger balance over
   * nothing, in silence (D88).
   */
  private Map<Integer, Long> committed(Generation g, int partitions) {
    Map<Integer, Long> start = pipeline.cluster().startOffsets(g.input(), partitions);
    Map<Integer, Long> end = pipeline.cluster().endOffsets(g.input(), partitions);
    long deadline = System.nanoTime() + COMMITTED_PATIENCE.toNanos();
    while (true) {
      Map<Integer, Long> committed = pipeline.cluster().committed(g.applicationId(), g.input());
      boolean complete =
          start.keySet().stream()
              .allMatch(p -> committed.containsKey(p) || end.get(p) <= start.get(p));
      if (complete || System.nanoTime() - deadline > 0) {
        return committed;
      }
      LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
    }
  }

  /** Where the audit starts, and why there when it is later than asked. */
  private record Since(Instant at, String floor) {}

  /**
   * Retention deletes whole segments past their retention, never a record younger than it: input
   * records younger than the shortest retention of the topics the ledger reads have all their
   * records still, and a record missing there is a loss, not retention (D88).
   */
  private Since auditedSince(Instant asked) {
    TopicNames topics = pipeline.config().topics();
    Instant at = asked;
    String floor = null;
    for (String topic : List.of(log.topic(), topics.events(), topics.stale(), topics.dlq())) {
      long ms =
          Long.parseLong(
              pipeline
                  .cluster()
                  .topicConfigs(topic)
                  .getOrDefault(TopicConfig.RETENTION_MS_CONFIG, KAFKA_DEFAULT_RETENTION_MS));
      Instant kept = ms < 0 ? null : Instant.now().minusMillis(ms);
      if (kept != null && (at == null || kept.isAfter(at))) {
        at = kept;
        floor = topic + " keeps " + Duration.ofMillis(ms) + " (retention.ms)";
      }
    }
    return new Since(at, floor);
  }

  private Result balance(
      Generation g,
      Instant since,
      String floor,
      Map<String, List<Decision>> decisions,
      Outputs outputs,
      Map<Integer, Long> from,
      Map<Integer, Long> to,
      SinkRows rows) {
    Map<Integer, Check> checks = new TreeMap<>();
    List<Unaccounted> named = new ArrayList<>();
    long[] total = {0};
    BiConsumer<Integer, Unaccounted> lost =
        (p, u) -> {
          checks.get(p).unaccounted++;
          total[0]++;
          if (named.size() < NAMED) {
            named.add(u);
          }
        };
    SinkCheck sinkCheck = rows == null ? null : new SinkCheck(rows, lost);
    for (int p : to.keySet()) {
      checks.put(p, new Check());
    }
    TopicScan.read(
        pipeline.clientSettings(),
        g.input(),
        from,
        to,
        r -> {
          Unaccounted u = checks.get(r.partition()).input(r, decisions, outputs, sinkCheck);
          if (u != null) {
            lost.accept(r.partition(), u);
          }
        },
        n -> {});
    if (sinkCheck != null) {
      sinkCheck.flush();
    }
    List<Balance> balances = new ArrayList<>();
    checks.forEach(
        (p, c) ->
            balances.add(
                new Balance(
                    p, from.get(p), to.get(p), c.received, c.decided, c.stillHeld, c.unaccounted)));
    return new Result(
        g, since, floor, balances, named, total[0], sinkCheck == null ? null : sinkCheck.balance());
  }

  /** This generation's decisions, by input coordinates. */
  private Map<String, List<Decision>> decisions(Generation g) {
    Map<String, List<Decision>> out = new HashMap<>();
    TopicScan.read(
        pipeline.clientSettings(),
        log.topic(),
        pipeline
            .cluster()
            .startOffsets(log.topic(), pipeline.cluster().partitions(log.topic()).get()),
        Map.of(),
        r -> {
          Decision d = Decision.parse(r.value());
          if (d.generation() == g.number() && d.inputTopic().equals(g.input())) {
            out.computeIfAbsent(d.input(), k -> new ArrayList<>(1)).add(d);
          }
        },
        n -> {});
    return out;
  }

  /** One partition's running balance. */
  private static final class Check {
    long received;
    long stillHeld;
    long unaccounted;
    final Map<Decision.Outcome, Long> decided = new EnumMap<>(Decision.Outcome.class);

    /**
     * Accounts for one input record; what is not accounted for, or null. An applied event whose
     * record is found goes on to {@code sink} (null: no sink) to be found in the database.
     */
    Unaccounted input(
        ConsumerRecord<byte[], byte[]> r,
        Map<String, List<Decision>> decisions,
        Outputs outputs,
        SinkCheck sink) {
      received++;
      String input = r.topic() + "/" + r.partition() + "/" + r.offset();
      String run = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
      String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
      List<Decision> ds = decisions.getOrDefault(input, List.of());
      List<Decision> primary = ds.stream().filter(d -> d.outcome().decidesInput()).toList();
      if (primary.size() != 1) {
        return new Unaccounted(
            input,
            run,
            id,
            primary.isEmpty()
                ? "received, and no decision is recorded"
                : "decided " + primary.size() + " times");
      }
      Decision d = primary.get(0);
      decided.merge(d.outcome(), 1L, Long::sum);
      String missing = null;
      List<Decision> events = new ArrayList<>(1);
      List<Long> at = new ArrayList<>(1);
      for (Decision each : ds) {
        String why = outputs.take(each);
        if (why == null && outputs.tookEvent()) {
          events.add(each);
          at.add(outputs.takenAt());
        }
        missing = missing != null ? missing : why;
      }
      if (d.outcome() == Decision.Outcome.HELD
          && ds.stream().noneMatch(x -> x.outcome() == Decision.Outcome.RELEASED)) {
        stillHeld++;
      }
      if (missing != null) {
        // One reason an input record is unaccounted for is enough: the records it lacks first.
        return new Unaccounted(input, run, id, missing);
      }
      for (int i = 0; sink != null && i < events.size(); i++) {
        sink.applied(
            r.partition(),
            input,
            events.get(i),
            Outputs.partition(at.get(i)),
            Outputs.offset(at.get(i)));
      }
      return null;
    }
  }

  /**
   * The output topics' records, counted by run, request id and replay, to be taken once each; with
   * the sink, the events topic's records by where they are too (D94).
   */
  private static final class Outputs {
    private final TopicNames topics;
    private final Map<String, Map<String, Integer>> byTopic = new HashMap<>();

    /**
     * The events topic's records' places by key (packed; nearly always one), when the sink is
     * checked, else null.
     */
    private final Map<String, long[]> eventsAt;

    private long taken = -1;

    private Outputs(TopicNames topics, boolean where) {
      this.topics = topics;
      this.eventsAt = where ? new HashMap<>() : null;
    }

    static Outputs read(Map<String, Object> clientSettings, TopicNames topics, boolean where) {
      Outputs o = new Outputs(topics, where);
      for (String topic : List.of(topics.events(), topics.stale(), topics.dlq())) {
        Map<String, Integer> counts = new HashMap<>();
        o.byTopic.put(topic, counts);
        boolean events = where && topic.equals(topics.events());
        Changelogs.readToEnd(
            clientSettings,
            topic,
            new ByteArrayDeserializer(),
            r -> {
              String k =
                  key(
                      r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8),
                      RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID),
                      RecordHeaders.get(r.headers(), Replay.HEADER));
              counts.merge(k, 1, Integer::sum);
              if (events) {
                long at = pack(r.partition(), r.offset());
                o.eventsAt.merge(
                    k,
                    new long[] {at},
                    (a, b) -> LongStream.concat(Arrays.stream(a), Arrays.stream(b)).toArray());
              }
            });
      }
      return o;
    }

    /** A partition and offset in one long: 16 bits of partition, 47 of offset. */
    static long pack(int partition, long offset) {
      return ((long) partition << 47) | offset;
    }

    static int partition(long packed) {
      return (int) (packed >>> 47);
    }

    static long offset(long packed) {
      return packed & ((1L << 47) - 1);
    }

    /** Whether the last {@link #take} took a record of the events topic whose place is known. */
    boolean tookEvent() {
      return taken >= 0;
    }

    /** Where the events topic's record the last {@link #take} took is, packed. */
    long takenAt() {
      return taken;
    }

    private static String key(String run, String requestId, String replay) {
      return run + "\u0000" + requestId + "\u0000" + replay;
    }

    /** Takes the record {@code d} wrote; why it is missing, or null. */
    String take(Decision d) {
      taken = -1;
      if (d.output() == null || d.outcome() == Decision.Outcome.RE_DERIVED) {
        return null;
      }
      String topic =
          switch (d.outcome()) {
            case APPLIED, RELEASED -> topics.events();
            case STALE -> topics.stale();
            case REUSED, DEAD_LETTERED, INVALID -> topics.dlq();
            default -> null;
          };
      if (topic == null) {
        return null;
      }
      Map<String, Integer> counts = byTopic.get(topic);
      String k = key(d.runId(), d.requestId(), d.replay());
      Integer n = counts.get(k);
      if (n == null || n == 0) {
        return d.outcome().tag() + ", and its record is not in " + topic;
      }
      counts.put(k, n - 1);
      if (eventsAt != null && topic.equals(topics.events())) {
        long[] at = eventsAt.get(k);
        taken = at[at.length - 1];
        eventsAt.put(k, Arrays.copyOf(at, at.length - 1));
      }
      return null;
    }
  }
}
