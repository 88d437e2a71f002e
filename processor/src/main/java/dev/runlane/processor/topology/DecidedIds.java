package dev.runlane.processor.topology;

import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Outcome;
import dev.runlane.processor.dedup.Recorded;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A task's record of the request ids it decided within the dedup horizon, each with its run and
 * whether it was to be applied or was stale (D68): the memory that lets a decision without Redis,
 * or on a marker that may be of an aborted attempt, tell a copy of a decided event from one never
 * decided.
 *
 * <p>A window store keyed by request id at the record's arrival time, changelogged and written in
 * the decision's transaction, so it never holds a decision that aborted. Its retention is the
 * horizon: segments older than that are dropped whole, with no per-run value that grows. The
 * arrival time, not the wall clock, so that a replay of the same input records the same.
 *
 * <p>Made anew in every {@code init()}, like the other parts over the task's stores.
 */
final class DecidedIds {
  /**
   * The key under which the record keeps since when it has covered this task's decisions, while
   * that is less than a horizon ago. U+0000 is in no request id (D62).
   */
  static final String SINCE_KEY = "\u0000since";

  private static final byte APPLIED = 1;
  private static final byte STALE = 0;

  /** No record, for benchmarks that measure what it costs: it knows nothing, keeps nothing. */
  static final DecidedIds NONE = new DecidedIds();

  private final WindowStore<String, byte[]> store; // null in NONE
  private final long horizonMs;

  /** Since when the record covers every decision of this task (epoch ms), MIN_VALUE if always. */
  private final long coversSinceMs;

  /** Whether {@link #coversSinceMs} is to be noted under {@link #SINCE_KEY} with the next write. */
  private boolean sinceToWrite;

  /**
   * @param upgraded whether this task may hold done markers written before it kept the record:
   *     generation 0's task (a later generation's owner prefix is its own, D35) with runs already
   *     in its store; its record, if it starts empty, covers only from now
   * @param nowMs the wall clock, for a record that starts now
   */
  DecidedIds(WindowStore<String, byte[]> store, Duration horizon, boolean upgraded, long nowMs) {
    this.store = store;
    this.horizonMs = horizon.toMillis();
    this.coversSinceMs = coversSince(upgraded, nowMs);
  }

  private DecidedIds() {
    this.store = null;
    this.horizonMs = 0;
    this.coversSinceMs = Long.MAX_VALUE;
  }

  /**
   * What the record says of {@code event}'s id: decided for its run (applied or stale), for another
   * run, or not at all within the horizon before the event arrived.
   */
  Recorded find(PendingEvent event) {
    if (store == null) {
      return Recorded.UNKNOWN;
    }
    long from = event.timestamp() - horizonMs;
    try (WindowStoreIterator<byte[]> it =
        store.backwardFetch(
            event.requestId(), Instant.ofEpochMilli(from), Instant.ofEpochMilli(Long.MAX_VALUE))) {
      if (!it.hasNext()) {
        return from >= coversSinceMs ? Recorded.NONE : Recorded.UNKNOWN;
      }
      byte[] value = it.next().value;
      if (!event.runId().equals(new String(value, 1, value.length - 1, StandardCharsets.UTF_8))) {
        return Recorded.OTHER_RUN;
      }
      return value[0] == APPLIED ? Recorded.APPLIED : Recorded.STALE;
    }
  }

  /**
   * Records {@code event}'s id as {@code outcome} decided it for its run: applied, held to be
   * applied (D46), or stale. A copy decided on a claim this task holds is recorded again, as its
   * done marker is written again with a fresh TTL: the record then keeps the id as long as Redis
   * does. A reused id stays its first run's; a copy decided on another's marker adds nothing.
   */
  void remember(PendingEvent event, Claim claim, Outcome outcome) {
    if (store == null) {
      return;
    }
    switch (outcome) {
      case APPLY, HELD -> put(event, APPLIED);
      case STALE -> put(event, STALE);
      case DUPLICATE_REDIS, DUPLICATE_STORE -> {
        if (claim.heldByThisTask()) {
          put(event, APPLIED);
        }
      }
      case REUSED, REUSED_STORE, WAIT -> {}
    }
  }

  private void put(PendingEvent event, byte outcome) {
    if (sinceToWrite) {
      // Written with the first decision, not in init(): a store written from init() is not a
      // path the tests run under exactly-once.
      store.put(
          SINCE_KEY, ByteBuffer.allocate(Long.BYTES).putLong(coversSinceMs).array(), coversSinceMs);
      sinceToWrite = false;
    }
    byte[] run = event.runId().getBytes(StandardCharsets.UTF_8);
    byte[] value = new byte[run.length + 1];
    value[0] = outcome;
    System.arraycopy(run, 0, value, 1, run.length);
    store.put(event.requestId(), value, event.timestamp());
  }

  /**
   * Since when the record covers this task's decisions. A record with entries and no since entry
   * has covered them for longer than the horizon (the since entry expired with its segment), or
   * since the task's first decision. An empty record where no marker of this owner can predate it
   * (a later generation's, or a task that never decided anything) covers all. An empty record of an
   * upgraded task covers from now, which it notes under {@link #SINCE_KEY}, with its first
   * decision, for a restart within the horizon.
   */
  private long coversSince(boolean upgraded, long nowMs) {
    try (WindowStoreIterator<byte[]> it =
        store.fetch(SINCE_KEY, Instant.EPOCH, Instant.ofEpochMilli(Long.MAX_VALUE))) {
      if (it.hasNext()) {
        return ByteBuffer.wrap(it.next().value).getLong();
      }
    }
    boolean empty;
    try (KeyValueIterator<?, byte[]> all = store.all()) {
      empty = !all.hasNext();
    }
    if (!empty || !upgraded) {
      return Long.MIN_VALUE;
    }
    sinceToWrite = true;
    return nowMs;
  }
}
