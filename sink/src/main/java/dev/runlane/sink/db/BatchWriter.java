package dev.runlane.sink.db;

import dev.runlane.sink.event.SinkEvent;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;

/**
 * Writes one poll's batch in one transaction: the partitions' offsets first, then the events, then
 * the runs. Each is one statement over arrays ({@code unnest}), so a batch costs three round trips
 * whatever its size; a crash anywhere rolls all of it back, and the offsets say where to read from.
 */
public final class BatchWriter {

  /** Where a partition's stored offset must be, and where this batch moves it. */
  public record OffsetMove(Long expected, long next) {}

  /**
   * What the transaction did.
   *
   * @param written the events stored now, in the batch's order
   * @param duplicates events whose request id was stored already (or earlier in the batch)
   * @param runsApplied runs whose state moved forward
   * @param runsRefused runs whose stored state is newer than the batch's newest event of theirs
   * @param rejected the records set aside in {@code sink_rejected} (D61)
   * @param bisected whether PostgreSQL refused a row, so the batch was written again in parts
   */
  public record Result(
      List<SinkEvent> written,
      int duplicates,
      int runsApplied,
      int runsRefused,
      List<RejectedRecord> rejected,
      boolean bisected) {}

  private static final String MOVE_OFFSET =
      "UPDATE sink_offsets SET next_offset = ?, updated_at = now()"
          + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = ? AND next_offset = ?";

  private static final String FIRST_OFFSET =
      "INSERT INTO sink_offsets (consumer_group, topic, kafka_partition, next_offset)"
          + " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING";

  private static final String INSERT_EVENTS =
      "INSERT INTO processed_events (request_id, run_id, type, created_at, created_at_nanos, data,"
          + " received_at, topic, kafka_partition, kafka_offset, replay)"
          + " SELECT e.request_id, e.run_id, e.type, e.created_at::timestamptz, e.nanos,"
          + " e.data::jsonb, e.received_at::timestamptz, ?, e.kafka_partition, e.kafka_offset,"
          + " e.replay"
          + " FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int4[], ?::text[],"
          + " ?::text[], ?::int4[], ?::int8[], ?::text[])"
          + " AS e(request_id, run_id, type, created_at, nanos, data, received_at,"
          + " kafka_partition, kafka_offset, replay)"
          + " ON CONFLICT (request_id) DO NOTHING"
          + " RETURNING request_id";

  /**
   * The guard: a run's row changes only for a newer (created_at, request_id) than it holds, so an
   * older event never overwrites a newer state (G3), whatever order the rows arrive in.
   */
  private static final String UPSERT_RUNS =
      "INSERT INTO runs (run_id, last_request_id, last_created_at, last_created_at_nanos,"
          + " last_type, applied_count, updated_at, data)"
          + " SELECT r.run_id, r.request_id, r.created_at::timestamptz, r.nanos, r.type, r.applied,"
          + " r.updated_at::timestamptz, r.data::jsonb"
          + " FROM unnest(?::text[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::int8[],"
          + " ?::text[], ?::text[])"
          + " AS r(run_id, request_id, created_at, nanos, type, applied, updated_at, data)"
          + " ON CONFLICT (run_id) DO UPDATE SET"
          + " last_request_id = EXCLUDED.last_request_id,"
          + " last_created_at = EXCLUDED.last_created_at,"
          + " last_created_at_nanos = EXCLUDED.last_created_at_nanos,"
          + " last_type = EXCLUDED.last_type,"
          + " applied_count = runs.applied_count + EXCLUDED.applied_count,"
          + " updated_at = EXCLUDED.updated_at,"
          + " data = EXCLUDED.data"
          + " WHERE (runs.last_created_at, runs.last_created_at_nanos, runs.last_request_id)"
          + " < (EXCLUDED.last_created_at, EXCLUDED.last_created_at_nanos,"
          + " EXCLUDED.last_request_id)"
          + " RETURNING run_id";

  /**
   * This many events refused in a row, none stored between them, are taken for a fault of the
   * database's, not of the rows (D61).
   */
  static final int SYSTEMIC_REFUSALS = 64;

  private final String group;
  private final String topic;
  private final RejectedTable rejectedTable;
  private int refusedInARow;
  private boolean systemic;

  public BatchWriter(String group, String topic) {
    this.group = group;
    this.topic = topic;
    this.rejectedTable = new RejectedTable(group);
  }

  /**
   * Writes the batch and commits; on any failure rolls back and throws, leaving the database as it
   * was.
   *
   * <p>A row PostgreSQL refuses for what it holds ({@link SqlFailure#RECORD}) fails the batch's
   * statements, so the batch is rolled back and written again in parts, each under a savepoint,
   * each failing part again in parts, down to the single events refused; those are set aside in
   * {@code sink_rejected} and the rest commits with the offsets (D61). A batch with no such row
   * costs what it did before: three statements, no savepoint. One refused event among n costs about
   * 8·log8(n) part writes more.
   *
   * @param events the batch's decodable events, in poll order
   * @param undecodable records of the batch that are no event, set aside with it
   * @param moves every partition the batch read from (records that could not be decoded move
   *     offsets too)
   * @throws SQLException a failure that is not the rows' fault: the database's, or a retry
   * @throws OffsetsMovedException if a stored offset is not where {@code moves} expects it
   */
  public Result write(
      Connection c,
      List<SinkEvent> events,
      List<RejectedRecord> undecodable,
      Map<TopicPartition, OffsetMove> moves)
      throws SQLException, OffsetsMovedException {
    try {
      return attempt(c, events, undecodable, moves, false);
    } catch (SQLException e) {
      rollback(c, e);
      if (SqlFailure.of(e) != SqlFailure.RECORD) {
        throw e;
      }
    } catch (OffsetsMovedException | RuntimeException e) {
      rollback(c, e);
      throw e;
    }
    try {
      return attempt(c, events, undecodable, moves, true);
    } catch (SQLException | OffsetsMovedException | RuntimeException e) {
      rollback(c, e);
      throw e;
    }
  }

  private Result attempt(
      Connection c,
      List<SinkEvent> events,
      List<RejectedRecord> undecodable,
      Map<TopicPartition, OffsetMove> moves,
      boolean bisect)
      throws SQLException, OffsetsMovedException {
    moveOffsets(c, moves);
    List<SinkEvent> copies = new ArrayList<>();
    List<SinkEvent> unique = firstCopies(events, copies);
    Parts parts = new Parts();
    if (bisect) {
      // A deferred constraint of the user's would fail at commit, where no part can be told
      // from another: checked at each statement instead, inside its part's savepoint.
      try (Statement s = c.createStatement()) {
        s.execute("SET CONSTRAINTS ALL IMMEDIATE");
      }
      storeInParts(c, unique, parts);
      refuseSystemic(parts);
      rejectCopiesOfRefused(copies, parts);
    } else {
      parts.store(c, unique);
    }
    List<RejectedRecord> rejected = new ArrayList<>(undecodable);
    rejected.addAll(parts.rejected);
    rejectedTable.insert(c, rejected);
    c.commit();
    if (parts.written.isEmpty()) {
      refusedInARow += parts.rejected.size();
    } else {
      refusedInARow = 0;
      systemic = false;
    }
    return new Result(
        parts.written,
        events.size() - parts.written.size() - parts.rejected.size(),
        parts.applied,
        parts.refused,
        rejected,
        bisect);
  }

  /**
   * Many events refused in a row with none stored between them is no coincidence of the rows: a
   * trigger, a constraint or a grant fails every row alike, and setting them all aside would empty
   * the input into the rejected table. Counted across batches (a batch read again after a wait may
   * be small); the batch is rolled back and waits as in an outage, named, until a row is stored
   * again (D61).
   */
  private void refuseSystemic(Parts parts) throws SQLException {
    if (!parts.written.isEmpty() || parts.rejected.isEmpty()) {
      return;
    }
    // Once taken for the database's, it stays so until a row is stored: the batch read again
    // after the wait may hold fewer events than the threshold.
    if (systemic || refusedInARow + parts.rejected.size() >= SYSTEMIC_REFUSALS) {
      systemic = true;
      RejectedRecord first = parts.rejected.get(0);
      throw new SQLException(
          "PostgreSQL refused "
              + (refusedInARow + parts.rejected.size())
              + " events in a row and stored none (now: SQLSTATE "
              + first.sqlState()
              + ", "
              + first.reason()
              + "): a trigger, constraint or grant that fails every row, not the rows; waiting"
              + " for it to be fixed",
          "XX000");
    }
  }

  /** A later copy of a refused event in the same batch is set aside with it, never dropped. */
  private static void rejectCopiesOfRefused(List<SinkEvent> copies, Parts parts) {
    if (copies.isEmpty() || parts.rejected.isEmpty()) {
      return;
    }
    Map<String, RejectedRecord> refused = new HashMap<>();
    for (RejectedRecord r : parts.rejected) {
      refused.putIfAbsent(r.requestId(), r);
    }
    for (SinkEvent copy : copies) {
      RejectedRecord first = refused.get(copy.requestId());
      if (first != null) {
        parts.rejected.add(
            new RejectedRecord(
                copy.source(),
                copy.requestId(),
                copy.runId(),
                first.sqlState(),
                "a copy of " + first.coordinates() + ", refused: " + first.reason()));
      }
    }
  }

  /** What the parts of a batch stored and set aside. */
  private final class Parts {
    final List<SinkEvent> written = new ArrayList<>();
    final List<RejectedRecord> rejected = new ArrayList<>();
    int applied;
    int refused;

    void store(Connection c, List<SinkEvent> events) throws SQLException {
      List<SinkEvent> stored = insertEvents(c, events);
      int[] runs = upsertRuns(c, stored);
      written.addAll(stored);
      applied += runs[0];
      refused += runs[1];
    }
  }

  /**
   * Stores {@code events} under a savepoint; when PostgreSQL refuses a row, rolls back to it and
   * stores each half the same way, so what is refused narrows down to single events. The halves
   * keep the poll order, and a run's events sit in one partition in its order, so an earlier part
   * holds a run's older events: its row moves forward part by part as it would in one statement.
   */
  private void storeInParts(Connection c, List<SinkEvent> events, Parts parts) throws SQLException {
    if (events.isEmpty()) {
      return;
    }
    Savepoint savepoint = c.setSavepoint();
    try {
      parts.store(c, events);
      c.releaseSavepoint(savepoint);
      return;
    } catch (SQLException e) {
      if (SqlFailure.of(e) != SqlFailure.RECORD) {
        throw e;
      }
      c.rollback(savepoint);
      if (events.size() == 1) {
        SinkEvent refused = events.get(0);
        parts.rejected.add(
            RejectedRecord.refused(refused.source(), refused.requestId(), refused.runId(), e));
        return;
      }
    }
    int half = events.size() / 2;
    storeInParts(c, events.subList(0, half), parts);
    storeInParts(c, events.subList(half, events.size()), parts);
  }

  private static void rollback(Connection c, Exception e) {
    try {
      c.rollback();
    } catch (SQLException suppressed) {
      e.addSuppressed(suppressed);
    }
  }

  /** First: the row locks on the offsets also keep a second writer of a partition waiting. */
  private void moveOffsets(Connection c, Map<TopicPartition, OffsetMove> moves)
      throws SQLException, OffsetsMovedException {
    Map<TopicPartition, OffsetMove> sorted =
        new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
    sorted.putAll(moves);
    List<TopicPartition> updated = new ArrayList<>();
    List<TopicPartition> inserted = new ArrayList<>();
    try (PreparedStatement update = c.prepareStatement(MOVE_OFFSET);
        PreparedStatement insert = c.prepareStatement(FIRST_OFFSET)) {
      for (var e : sorted.entrySet()) {
        TopicPartition tp = e.getKey();
        OffsetMove move = e.getValue();
        if (move.expected() == null) {
          insert.setString(1, group);
          insert.setString(2, tp.topic());
          insert.setInt(3, tp.partition());
          insert.setLong(4, move.next());
          insert.addBatch();
          inserted.add(tp);
        } else {
          update.setLong(1, move.next());
          update.setString(2, group);
          update.setString(3, tp.topic());
          update.setInt(4, tp.partition());
          update.setLong(5, move.expected());
          update.addBatch();
          updated.add(tp);
        }
      }
      check(updated.isEmpty() ? new int[0] : update.executeBatch(), updated, moves);
      check(inserted.isEmpty() ? new int[0] : insert.executeBatch(), inserted, moves);
    }
  }

  private static void check(
      int[] counts, List<TopicPartition> partitions, Map<TopicPartition, OffsetMove> moves)
      throws OffsetsMovedException {
    for (int i = 0; i < counts.length; i++) {
      if (counts[i] != 1) {
        TopicPartition tp = partitions.get(i);
        throw new OffsetsMovedException(tp, moves.get(tp).expected());
      }
    }
  }

  /**
   * The first copy of each request id; later copies in the same batch go to {@code copies}: each is
   * a duplicate of its first, or set aside with it if that is refused.
   */
  private static List<SinkEvent> firstCopies(List<SinkEvent> events, List<SinkEvent> copies) {
    Set<String> seen = new HashSet<>();
    List<SinkEvent> out = new ArrayList<>(events.size());
    for (SinkEvent e : events) {
      if (seen.add(e.requestId())) {
        out.add(e);
      } else {
        copies.add(e);
      }
    }
    return out;
  }

  private List<SinkEvent> insertEvents(Connection c, List<SinkEvent> events) throws SQLException {
    if (events.isEmpty()) {
      return List.of();
    }
    // Key order: two transactions inserting the same ids lock them in the same order.
    List<SinkEvent> sorted = new ArrayList<>(events);
    sorted.sort(Comparator.comparing(SinkEvent::requestId));
    int n = sorted.size();
    String[] requestIds = new String[n];
    String[] runIds = new String[n];
    String[] types = new String[n];
    String[] createdAt = new String[n];
    Integer[] nanos = new Integer[n];
    String[] data = new String[n];
    String[] receivedAt = new String[n];
    Integer[] partitions = new Integer[n];
    Long[] offsets = new Long[n];
    String[] replays = new String[n];
    for (int i = 0; i < n; i++) {
      SinkEvent e = sorted.get(i);
      requestIds[i] = e.requestId();
      runIds[i] = e.runId();
      types[i] = e.type();
      createdAt[i] = e.createdAtMicros().toString();
      nanos[i] = e.createdAtNanos();
      data[i] = e.data();
      receivedAt[i] = e.updatedAt().toString();
      partitions[i] = e.partition();
      offsets[i] = e.offset();
      replays[i] = e.replay();
    }
    Set<String> inserted = new HashSet<>();
    try (PreparedStatement s = c.prepareStatement(INSERT_EVENTS)) {
      s.setString(1, topic);
      int p = 2;
      for (Array a :
          List.of(
              c.createArrayOf("text", requestIds),
              c.createArrayOf("text", runIds),
              c.createArrayOf("text", types),
              c.createArrayOf("text", createdAt),
              c.createArrayOf("int4", nanos),
              c.createArrayOf("text", data),
              c.createArrayOf("text", receivedAt),
              c.createArrayOf("int4", partitions),
              c.createArrayOf("int8", offsets),
              c.createArrayOf("text", replays))) {
        s.setArray(p++, a);
      }
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          inserted.add(rs.getString(1));
        }
      }
    }
    List<SinkEvent> written = new ArrayList<>(inserted.size());
    for (SinkEvent e : events) {
      if (inserted.contains(e.requestId())) {
        written.add(e);
      }
    }
    return written;
  }

  /**
   * One row per run: the batch's newest new event of the run, with how many new events it has.
   *
   * @return {applied, refused}
   */
  private static int[] upsertRuns(Connection c, List<SinkEvent> written) throws SQLException {
    if (written.isEmpty()) {
      return new int[] {0, 0};
    }
    Map<String, SinkEvent> newest = new TreeMap<>(); // run id order: the same lock order
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (SinkEvent e : written) {
      newest.merge(e.runId(), e, (a, b) -> SinkEvent.ORDER.compare(a, b) >= 0 ? a : b);
      counts.merge(e.runId(), 1, Integer::sum);
    }
    int n = newest.size();
    String[] runIds = new String[n];
    String[] requestIds = new String[n];
    String[] createdAt = new String[n];
    Integer[] nanos = new Integer[n];
    String[] types = new String[n];
    Long[] applied = new Long[n];
    String[] updatedAt = new String[n];
    String[] data = new String[n];
    int i = 0;
    for (SinkEvent e : newest.values()) {
      runIds[i] = e.runId();
      requestIds[i] = e.requestId();
      createdAt[i] = e.createdAtMicros().toString();
      nanos[i] = e.createdAtNanos();
      types[i] = e.type();
      applied[i] = (long) counts.get(e.runId());
      updatedAt[i] = e.updatedAt().toString();
      data[i] = e.data();
      i++;
    }
    int moved = 0;
    try (PreparedStatement s = c.prepareStatement(UPSERT_RUNS)) {
      int p = 1;
      for (Array a :
          List.of(
              c.createArrayOf("text", runIds),
              c.createArrayOf("text", requestIds),
              c.createArrayOf("text", createdAt),
              c.createArrayOf("int4", nanos),
              c.createArrayOf("text", types),
              c.createArrayOf("int8", applied),
              c.createArrayOf("text", updatedAt),
              c.createArrayOf("text", data))) {
        s.setArray(p++, a);
      }
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          moved++;
        }
      }
    }
    return new int[] {moved, n - moved};
  }
}
