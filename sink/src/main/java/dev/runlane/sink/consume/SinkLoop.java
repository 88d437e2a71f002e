package dev.runlane.sink.consume;

import dev.runlane.sink.SinkMetrics;
import dev.runlane.sink.db.BatchWriter;
import dev.runlane.sink.db.BatchWriter.OffsetMove;
import dev.runlane.sink.db.OffsetStore;
import dev.runlane.sink.db.OffsetsMovedException;
import dev.runlane.sink.db.RejectedRecord;
import dev.runlane.sink.db.SinkDatabase;
import dev.runlane.sink.db.SqlFailure;
import dev.runlane.sink.event.EventDecoder;
import dev.runlane.sink.event.SinkEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's consumer thread: poll, write the batch in one transaction with its offsets, repeat.
 *
 * <p>Positions come from the database only: a partition assigned to this consumer is paused until
 * its stored offset has been read and sought to (the beginning when none is stored), so no record
 * is written from a position the database did not choose. When the database fails, the batch is
 * rolled back, every partition is paused and positioned again from the database once it answers:
 * the records of the failed batch are read again, and the constraint absorbs any that a commit
 * whose answer was lost did store. Polling goes on meanwhile (paused partitions return nothing), so
 * the consumer keeps its place in the group while it waits.
 *
 * <p>A row PostgreSQL refuses for what it holds is no outage: the batch writer sets that record
 * aside in {@code sink_rejected} and commits the rest (D61). A stored offset outside the log (below
 * its start: retention deleted records the database never got; past its end: the topic made again)
 * is refused: the partition stays paused, not ready, until an operator accepts the gap (D63).
 */
public final class SinkLoop implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(SinkLoop.class);

  private static final Duration POLL = Duration.ofMillis(200);

  /** While idle, the database is checked this often, so readiness notices an outage anyway. */
  private static final Duration IDLE_PROBE = Duration.ofSeconds(2);

  /** A partition at a retention gap reads its stored offset again this often (accepted yet?). */
  private static final Duration GAP_RECHECK = Duration.ofSeconds(2);

  /** Serialization failures or deadlocks in a row before the sink calls it a database failure. */
  private static final int MAX_RETRIES = 5;

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final SinkDatabase database;
  private final OffsetStore offsets;
  private final BatchWriter writer;
  private final EventDecoder decoder = new EventDecoder();
  private final SinkMetrics metrics;
  private final TopicProbe probe;
  private final RetentionGaps gaps;
  private final Runnable onDeath;
  private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5));

  /** The stored next offset of each assigned, positioned partition (null: none stored yet). */
  private final Map<TopicPartition, Long> stored = new HashMap<>();

  private final Set<TopicPartition> unpositioned = new HashSet<>();

  private volatile boolean running = true;
  private volatile boolean joined;
  private volatile boolean databaseUp = true;
  private volatile boolean positioned;
  private volatile Throwable failure;
  private long lastDatabaseContact = System.nanoTime();
  private long lastGapCheck = System.nanoTime();
  private int retries;

  /**
   * @param onDeath run once, on this loop's thread, when the loop stops on a failure it cannot
   *     recover from (the service's main makes it exit, so its supervisor restarts it)
   */
  public SinkLoop(
      Consumer<String, byte[]> consumer,
      String topic,
      String group,
      SinkDatabase database,
      SinkMetrics metrics,
      Runnable onDeath) {
    this.consumer = consumer;
    this.topic = topic;
    this.database = database;
    this.offsets = new OffsetStore(group);
    this.writer = new BatchWriter(group, topic);
    this.metrics = metrics;
    this.probe = new TopicProbe(consumer, topic, metrics);
    this.gaps = new RetentionGaps(group, metrics);
    this.onDeath = onDeath;
  }

  /**
   * Joined its group, every assigned partition positioned (none at a retention gap), the database
   * and the broker answering.
   */
  public boolean ready() {
    return joined && positioned && databaseUp && probe.brokerUp() && gaps.none() && failure == null;
  }

  /** False once the loop died of something it cannot recover from. */
  public boolean live() {
    return failure == null;
  }

  public boolean databaseUp() {
    return databaseUp;
  }

  /** Stops the loop from another thread; it closes the consumer on its way out. */
  public void stop() {
    running = false;
    consumer.wakeup();
  }

  @Override
  public void run() {
    try {
      consumer.subscribe(List.of(topic), new Listener());
      while (running) {
        step();
      }
    } catch (WakeupException e) {
      if (running) {
        failure = e;
        throw e;
      }
    } catch (RuntimeException | Error e) {
      failure = e;
      log.error("sink loop stopped: {}", e.toString(), e);
      onDeath.run();
      throw e;
    } finally {
      consumer.close();
    }
  }

  private void step() {
    probe.maybeProbe(consumer.assignment(), stored);
    if (gaps.any() && System.nanoTime() - lastGapCheck > GAP_RECHECK.toNanos()) {
      lastGapCheck = System.nanoTime();
      unpositioned.addAll(gaps.partitions()); // read again: has an operator accepted it?
    }
    if (!unpositioned.isEmpty() && !position()) {
      // Every partition paused first: with an incremental assignor the partitions kept through a
      // rebalance are still resumed, and what this poll returned for them would be dropped while
      // the consumer's position moved past it.
      repositionAll();
      consumer.poll(backoff.next()); // paused: keeps the group membership while waiting
      return;
    }
    positioned = unpositioned.isEmpty();
    ConsumerRecords<String, byte[]> records;
    try {
      records = consumer.poll(POLL);
    } catch (OffsetOutOfRangeException e) {
      // Retention deleted records at the position while the sink was behind: position again
      // from the database, which finds the gap and refuses it (auto.offset.reset is none: D63).
      consumer.pause(e.partitions());
      unpositioned.addAll(e.partitions());
      positioned = false;
      return;
    }
    if (records.isEmpty()) {
      probeWhenIdle();
      return;
    }
    long start = System.nanoTime();
    Batch batch = decode(records);
    try (Connection c = database.connection()) {
      BatchWriter.Result result = writer.write(c, batch.events, batch.undecodable, batch.moves);
      batch.moves.forEach((tp, move) -> stored.put(tp, move.next()));
      databaseContact(true);
      retries = 0;
      record(records.count(), start, result, batch.receivedAt);
      commitForTools(batch.moves);
    } catch (OffsetsMovedException e) {
      log.warn("batch rolled back, positioning again from the database: {}", e.getMessage());
      metrics.offsetsMoved();
      repositionAll();
    } catch (SQLException e) {
      if (SqlFailure.of(e) == SqlFailure.RETRY && ++retries <= MAX_RETRIES) {
        log.info("batch rolled back by {}; writing it again", SqlFailure.describe(e));
        metrics.batchRetried();
      } else {
        databaseFailed(e);
        repositionAll();
        consumer.poll(backoff.next()); // paused: waits, and keeps the group membership
        return;
      }
      repositionAll();
    }
  }

  /**
   * Seeks every unpositioned partition to its stored offset, or leaves it paused where that offset
   * is outside the log; false while the database or the broker fails.
   */
  private boolean position() {
    Set<TopicPartition> wanted = new HashSet<>(unpositioned);
    wanted.retainAll(consumer.assignment());
    unpositioned.retainAll(wanted);
    gaps.retainAll(consumer.assignment());
    if (wanted.isEmpty()) {
      return true;
    }
    Map<TopicPartition, Long> found;
    try (Connection c = database.connection()) {
      found = offsets.read(c, wanted);
    } catch (SQLException e) {
      databaseFailed(e);
      return false;
    }
    // A read that answers is no proof that writes will: only a committed batch (or an idle
    // validation) says the database is up again, so a grant revoked does not flap readiness.
    lastDatabaseContact = System.nanoTime();
    Map<TopicPartition, Long> logStarts;
    Map<TopicPartition, Long> logEnds;
    try {
      logStarts = probe.logStarts(wanted);
      logEnds = probe.logEnds(wanted);
    } catch (WakeupException e) {
      throw e;
    } catch (KafkaException e) {
      log.debug("log offsets not listed: {}", e.toString());
      return false;
    }
    List<TopicPartition> fresh = new ArrayList<>();
    List<TopicPartition> resumed = new ArrayList<>();
    for (TopicPartition tp : wanted) {
      Long next = found.get(tp);
      stored.put(tp, next);
      if (!insideLog(tp, next, logStarts.get(tp), logEnds.get(tp))) {
        continue;
      }
      if (next == null) {
        fresh.add(tp);
      } else {
        consumer.seek(tp, next);
      }
      resumed.add(tp);
    }
    if (!fresh.isEmpty()) {
      consumer.seekToBeginning(fresh);
    }
    consumer.resume(resumed);
    unpositioned.removeAll(wanted);
    if (!resumed.isEmpty()) {
      log.info("positioned {} partition(s) from the database: {}", resumed.size(), found);
    }
    return true;
  }

  /**
   * Whether {@code tp}'s stored offset {@code next} (null: none stored) can be read from; a
   * partition whose offset is outside the log is handed to the gaps, which keep it paused.
   */
  private boolean insideLog(TopicPartition tp, Long next, Long logStart, Long logEnd) {
    if (next != null && next < 0) {
      throw new IllegalStateException(
          "sink_offsets holds next_offset " + next + " for " + tp + ": no offset is negative");
    }
    if (next != null && logStart != null && next < logStart) {
      gaps.found(tp, next, logStart);
      return false;
    }
    if (next != null && logEnd != null && next > logEnd) {
      gaps.ahead(tp, next, logEnd);
      return false;
    }
    gaps.closed(tp);
    return true;
  }

  private void repositionAll() {
    Set<TopicPartition> assigned = consumer.assignment();
    consumer.pause(assigned);
    unpositioned.addAll(assigned);
    positioned = false;
  }

  private record Batch(
      List<SinkEvent> events,
      List<RejectedRecord> undecodable,
      Map<TopicPartition, OffsetMove> moves,
      Map<String, Instant> receivedAt) {}

  private Batch decode(ConsumerRecords<String, byte[]> records) {
    List<SinkEvent> events = new ArrayList<>(records.count());
    List<RejectedRecord> undecodable = new ArrayList<>();
    Map<String, Instant> receivedAt = new HashMap<>();
    Map<TopicPartition, OffsetMove> moves = new HashMap<>();
    for (TopicPartition tp : records.partitions()) {
      List<ConsumerRecord<String, byte[]>> part = records.records(tp);
      for (ConsumerRecord<String, byte[]> r : part) {
        try {
          EventDecoder.Decoded d = decoder.decode(r);
          if (d.dataUnstorable()) {
            metrics.dataUnstorable();
            log.warn(
                "data not stored: PostgreSQL's jsonb cannot hold it (U+0000 or an unpaired"
                    + " surrogate) request_id={} run_id={}",
                d.event().requestId(),
                d.event().runId());
          }
          events.add(d.event());
          Instant received = EventDecoder.receivedAt(r);
          if (received != null) {
            receivedAt.put(d.event().requestId(), received);
          }
        } catch (EventDecoder.UndecodableException e) {
          // Set aside with its batch and logged once it commits: nothing can decode it later.
          undecodable.add(RejectedRecord.undecodable(r, "no event: " + e.getMessage()));
        }
      }
      long last = part.get(part.size() - 1).offset();
      moves.put(tp, new OffsetMove(stored.get(tp), Math.max(last + 1, consumer.position(tp))));
    }
    return new Batch(events, undecodable, moves, receivedAt);
  }

  private void record(
      int records, long start, BatchWriter.Result result, Map<String, Instant> receivedAt) {
    metrics.batch(records, System.nanoTime() - start);
    metrics.written(result.written().size());
    metrics.duplicates(result.duplicates());
    metrics.runs(result.runsApplied(), result.runsRefused());
    for (RejectedRecord r : result.rejected()) {
      metrics.rejected();
      log.warn(
          "record {} {}; set aside in sink_rejected (runlane sink rejected lists it)"
              + " request_id={} run_id={}",
          r.coordinates(),
          r.sqlState() == null
              ? "not stored: " + r.reason()
              : "refused by PostgreSQL (SQLSTATE " + r.sqlState() + "): " + r.reason(),
          RejectedRecord.excerpt(r.requestId()),
          RejectedRecord.excerpt(r.runId()));
    }
    Instant now = Instant.now();
    for (SinkEvent e : result.written()) {
      Instant received = receivedAt.get(e.requestId());
      if (received != null) {
        metrics.endToEnd(Duration.between(received, now));
      }
    }
    if (result.duplicates() > 0 || result.runsRefused() > 0) {
      log.debug(
          "batch: {} written, {} duplicates absorbed, {} runs refused an older state",
          result.written().size(),
          result.duplicates(),
          result.runsRefused());
    }
  }

  /**
   * Also commits the offsets to Kafka, only so that Kafka's own tools ({@code
   * kafka-consumer-groups}) show the sink's lag; the sink never reads them back.
   */
  private void commitForTools(Map<TopicPartition, OffsetMove> moves) {
    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    moves.forEach((tp, m) -> commit.put(tp, new OffsetAndMetadata(m.next())));
    consumer.commitAsync(
        commit,
        (done, e) -> {
          if (e != null) {
            log.debug("offset commit for the tools failed (harmless): {}", e.toString());
          }
        });
  }

  private void probeWhenIdle() {
    if (System.nanoTime() - lastDatabaseContact < IDLE_PROBE.toNanos()) {
      return;
    }
    boolean up = database.answers();
    if (up) {
      databaseContact(true);
    } else {
      databaseFailed(null);
      repositionAll();
    }
  }

  private void databaseContact(boolean up) {
    lastDatabaseContact = System.nanoTime();
    if (up && !databaseUp) {
      log.info("database answers again; writing resumes from the stored offsets");
    }
    databaseUp = up;
    metrics.databaseAvailable(up);
    backoff.reset();
  }

  private void databaseFailed(SQLException e) {
    metrics.databaseFailure();
    if (databaseUp) {
      log.warn(
          "database failed, waiting for it (not ready meanwhile): {}",
          e == null ? "no answer to a validation" : SqlFailure.describe(e));
    } else {
      log.debug("database still unavailable", e);
    }
    databaseUp = false;
    metrics.databaseAvailable(false);
    lastDatabaseContact = System.nanoTime();
  }

  /** Runs inside {@code poll()}, on this thread: pauses new partitions until positioned. */
  private final class Listener implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      joined = true;
      consumer.pause(partitions);
      // A position until the database gives the real one: with no reset policy (D63), a paused
      // partition with none would fail every poll. Never read from: position() seeks first.
      consumer.seekToBeginning(partitions);
      unpositioned.addAll(partitions);
      positioned = unpositioned.isEmpty();
      if (!partitions.isEmpty()) {
        log.info("assigned {}", partitions);
      }
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      // Nothing is in flight: each batch commits before the next poll, where revocation happens.
      partitions.forEach(stored::remove);
      unpositioned.removeAll(partitions);
      gaps.forget(partitions);
      if (!partitions.isEmpty()) {
        log.info("revoked {}", partitions);
      }
    }
  }
}
