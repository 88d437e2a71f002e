package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.Refused;
import dev.runlane.tools.generation.Pipeline;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.config.TopicConfig;

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
 *
 * <p>A ledger keeps its books between audits: each audit reads on from where the last one stopped
 * in the input, the decision log and the outputs, so that {@code audit --watch} reads each record
 * once (D89). Its counts are those since its first audit of the running generation; a new
 * generation opens new books.
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
   * @param sink the sink's balance of this audit's records, or null without the sink (D94)
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
  private LedgerBooks books;

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

  /**
   * The ledger of the generation that runs, of input records received since {@code since}, read
   * whole: new books.
   */
  public Result auditWhole(Instant since) {
    books = null;
    return audit(since);
  }

  /**
   * The ledger of the generation that runs, of input records received since {@code since} (ignored
   * once the books of this generation are open): what this audit read, added to the books.
   */
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
    if (books == null
        || books.generation.number() != g.number()
        || !books.generation.input().equals(g.input())) {
      Since audited = auditedSince(since);
      Map<Integer, Long> from =
          audited.at() == null
              ? pipeline.cluster().startOffsets(g.input(), partitions)
              : pipeline.cluster().offsetsAt(g.input(), partitions, audited.at());
      books =
          new LedgerBooks(
              g,
              audited,
              from,
              new LedgerOutputs(
                  pipeline.clientSettings(), pipeline.config().topics(), sink != null));
    }
    try {
      Map<Integer, Long> committed = committed(g, partitions);
      // What the transactions that committed those offsets wrote is below these ends: read up to
      // them, as a transaction of another task still open there holds the last stable offset
      // back (D88).
      readDecisions(ends(log.topic()));
      Map<String, Map<Integer, Long>> outputEnds = new HashMap<>();
      for (String topic : books.outputs.topics()) {
        outputEnds.put(topic, ends(topic));
      }
      books.outputs.readOn(outputEnds);
      if (sink == null) {
        return balance(committed, null);
      }
      try (SinkRows rows = SinkRows.open(sink)) {
        return balance(committed, rows);
      }
    } catch (RuntimeException e) {
      // The books took part of what was read; the next audit reads whole rather than count a
      // record twice or miss its decision.
      books = null;
      throw e;
    }
  }

  /** {@code topic}'s end offsets, open transactions' records included. */
  private Map<Integer, Long> ends(String topic) {
    return pipeline
        .cluster()
        .endOffsets(
            topic, pipeline.cluster().partitions(topic).orElse(0), IsolationLevel.READ_UNCOMMITTED);
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
  record Since(Instant at, String floor) {}

  /**
   * Retention deletes whole segments past their retention, never a record younger than it: input
   * records younger than the shortest retention of the topics the ledger reads have all their
   * records still, and a record missing there is a loss, not retention (D88). A topic kept by size
   * ({@code retention.bytes}) can have deleted younger records: there the audit starts at the
   * oldest record the topic still has, in whichever partition that is the youngest.
   */
  private Since auditedSince(Instant asked) {
    TopicNames topics = pipeline.config().topics();
    Instant at = asked;
    String floor = null;
    for (String topic : List.of(log.topic(), topics.events(), topics.stale(), topics.dlq())) {
      Map<String, String> configs = pipeline.cluster().topicConfigs(topic);
      long ms =
          Long.parseLong(
              configs.getOrDefault(TopicConfig.RETENTION_MS_CONFIG, KAFKA_DEFAULT_RETENTION_MS));
      Instant kept = ms < 0 ? null : Instant.now().minusMillis(ms);
      if (kept != null && (at == null || kept.isAfter(at))) {
        at = kept;
        floor = topic + " keeps " + Duration.ofMillis(ms) + " (retention.ms)";
      }
      long bytes = Long.parseLong(configs.getOrDefault(TopicConfig.RETENTION_BYTES_CONFIG, "-1"));
      Instant oldest = bytes < 0 ? null : oldestKept(topic);
      if (oldest != null && (at == null || oldest.isAfter(at))) {
        at = oldest;
        floor =
            topic
                + " keeps "
                + bytes
                + " bytes a partition (retention.bytes) and has deleted records written up to "
                + oldest;
      }
    }
    return new Since(at, floor);
  }

  /**
   * The youngest of the oldest records {@code topic} still has in each partition where it deleted
   * some, or null when it deleted none. A partition that deleted all it had is left out: time
   * retention or a quiet partition explain it as well, and it says nothing of other records' age.
   */
  private Instant oldestKept(String topic) {
    int partitions = pipeline.cluster().partitions(topic).orElse(0);
    Map<Integer, Long> start = pipeline.cluster().startOffsets(topic, partitions);
    Map<Integer, Long> stable =
        pipeline.cluster().endOffsets(topic, partitions, IsolationLevel.READ_COMMITTED);
    Map<Integer, Long> from = new TreeMap<>();
    Map<Integer, Long> to = new TreeMap<>();
    start.forEach(
        (p, offset) -> {
          if (offset > 0 && stable.get(p) > offset) {
            from.put(p, offset);
            // The first committed record: the one at the start can be a transaction's marker.
            to.put(p, Math.min(stable.get(p), offset + 1000));
          }
        });
    if (from.isEmpty()) {
      return null;
    }
    Map<Integer, Long> first = new HashMap<>();
    TopicScan.read(
        pipeline.clientSettings(),
        topic,
        from,
        to,
        r -> first.putIfAbsent(r.partition(), r.timestamp()),
        n -> {});
    return first.values().stream().max(Long::compare).map(Instant::ofEpochMilli).orElse(null);
  }

  /**
   * Reads on in the decision log: this generation's decisions wait in the books for their input
   * record; a record released after its input was audited takes its output now.
   */
  private void readDecisions(Map<Integer, Long> ends) {
    LedgerBooks b = books;
    for (int p : ends.keySet()) {
      b.logAt.putIfAbsent(p, 0L);
    }
    Map<Integer, Long> stopped =
        TopicScan.read(
            pipeline.clientSettings(),
            log.topic(),
            b.logAt,
            ends,
            r -> {
              Decision d = Decision.parse(r.value());
              if (d.generation() == b.generation.number()
                  && d.inputTopic().equals(b.generation.input())) {
                b.decided(d);
              }
            },
            n -> {});
    b.logAt.putAll(stopped);
  }

  /**
   * Audits the input records committed since the last audit. With the sink, the applied events
   * among them the sink has read past must have their rows; one it has not read yet is counted "not
   * yet in the sink" and checked again at the next whole audit (D94).
   */
  private Result balance(Map<Integer, Long> committed, SinkRows rows) {
    LedgerBooks b = books;
    SinkCheck sinkCheck = rows == null ? null : new SinkCheck(rows, b::unaccounted);
    b.releasedLate(sinkCheck);
    Map<Integer, Long> from = new TreeMap<>();
    Map<Integer, Long> to = new TreeMap<>();
    for (int p : b.from.keySet()) {
      // A partition with no committed offset is not read: nothing there is decided yet (D88).
      if (committed.containsKey(p)) {
        from.put(p, b.next.get(p));
        to.put(p, Math.max(b.next.get(p), committed.get(p)));
      }
    }
    Map<Integer, Long> stopped =
        TopicScan.read(
            pipeline.clientSettings(),
            b.generation.input(),
            from,
            to,
            r -> b.received(r, sinkCheck),
            n -> {});
    if (sinkCheck != null) {
      sinkCheck.flush();
    }
    b.next.putAll(stopped);
    // Decisions of records below where the audit started (retention's floor) are never matched.
    b.pending.forEach((p, waiting) -> waiting.headMap(b.next.getOrDefault(p, 0L)).clear());
    List<Balance> balances = new ArrayList<>();
    b.counts.forEach(
        (p, c) ->
            balances.add(
                new Balance(
                    p,
                    b.from.get(p),
                    committed.containsKey(p) ? b.next.get(p) : -1,
                    c.received,
                    c.decided,
                    c.stillHeld,
                    c.unaccounted)));
    return new Result(
        b.generation,
        b.since.at(),
        b.since.floor(),
        balances,
        List.copyOf(b.named),
        b.unaccounted,
        sinkCheck == null ? null : sinkCheck.balance());
  }
}
