package dev.runlane.tools.ledger;

import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.sink.SinkConnections;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the sink's database holds, as {@code trace} and {@code audit} read it (D94): the row of a
 * request id in {@code processed_events} (its key), and the sink's progress on {@code TOPIC_EVENTS}
 * as it records it exactly once: {@code sink_offsets} (the next offset of each partition, written
 * in the transaction of the rows below it), {@code sink_rejected} (records set aside, D61) and
 * {@code sink_gaps} (ranges retention deleted, accepted by an operator, D63). Reads only; every
 * failure is thrown naming the database without its password.
 */
public final class SinkRows implements AutoCloseable {
  /** The table of applied events, one row per request id. */
  static final String TABLE = "processed_events";

  /** How many request ids one query asks for. */
  static final int BATCH = 1_000;

  /**
   * One row of {@code processed_events}, every column but the event's {@code data}, of which only
   * the size is shown: a trace prints no body (D86).
   */
  public record Row(
      String requestId,
      String runId,
      String type,
      Instant createdAt,
      Instant receivedAt,
      String topic,
      int partition,
      long offset,
      String replay,
      Instant recordedAt,
      Integer dataBytes) {}

  /**
   * What a trace shows of the sink (D94).
   *
   * @param rows each request id's row, or null for "no row"
   * @param positions the sink's next offset on each {@code <topic>/<partition>} of the traced runs,
   *     or null where it has stored none
   * @param error why the database could not be read, or null
   */
  public record Now(
      String database,
      String group,
      String table,
      Map<String, Row> rows,
      Map<String, Long> positions,
      String error) {}

  /** The database could not be read; the message names it without its password. */
  static final class Unreadable extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    Unreadable(String message, SQLException cause) {
      super(message, cause);
    }
  }

  /** A range of offsets an operator accepted as never stored: {@code [from, to)}. */
  record Gap(int partition, long from, long to) {
    boolean holds(int p, long offset) {
      return p == partition && offset >= from && offset < to;
    }
  }

  private static final String ROWS =
      "SELECT request_id, run_id, type, created_at, created_at_nanos, received_at, topic,"
          + " kafka_partition, kafka_offset, replay, recorded_at, octet_length(data::text)"
          + " FROM processed_events WHERE request_id = ANY (?)";

  private final SinkConfig config;
  private final Connection connection;

  private SinkRows(SinkConfig config, Connection connection) {
    this.config = config;
    this.connection = connection;
  }

  /** Connects to the sink's database. */
  static SinkRows open(SinkConfig config) {
    try {
      Connection c = SinkConnections.open(config);
      c.setAutoCommit(true);
      c.setReadOnly(true);
      return new SinkRows(config, c);
    } catch (SQLException e) {
      throw failed(config, e);
    }
  }

  /** The database as printed: its URL without a password. */
  String database() {
    return SinkConnections.masked(config.databaseUrl());
  }

  String group() {
    return config.groupId();
  }

  /** The topic the sink reads, {@code TOPIC_EVENTS}. */
  String topic() {
    return config.topic();
  }

  /** The rows of {@code requestIds} that are in the table, by request id. */
  Map<String, Row> rows(Collection<String> requestIds) {
    Map<String, Row> out = new HashMap<>();
    List<String> ids = new ArrayList<>(requestIds);
    try (PreparedStatement s = connection.prepareStatement(ROWS)) {
      for (int i = 0; i < ids.size(); i += BATCH) {
        List<String> batch = ids.subList(i, Math.min(ids.size(), i + BATCH));
        s.setArray(1, connection.createArrayOf("text", batch.toArray()));
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            Row r = row(rs);
            out.put(r.requestId(), r);
          }
        }
      }
      return out;
    } catch (SQLException e) {
      throw failed(config, e);
    }
  }

  private static Row row(ResultSet rs) throws SQLException {
    int bytes = rs.getInt(12);
    return new Row(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        // A timestamptz keeps microseconds: the nanoseconds within the second are their own column.
        rs.getTimestamp(4).toInstant().with(ChronoField.NANO_OF_SECOND, rs.getInt(5)),
        rs.getTimestamp(6).toInstant(),
        rs.getString(7),
        rs.getInt(8),
        rs.getLong(9),
        rs.getString(10),
        rs.getTimestamp(11).toInstant(),
        rs.wasNull() ? null : bytes);
  }

  /** Of {@code requestIds}, those without a row. */
  Set<String> missing(Collection<String> requestIds) {
    Set<String> missing = new HashSet<>(requestIds);
    missing.removeAll(rows(requestIds).keySet());
    return missing;
  }

  /** The sink's next offset of each partition of its topic that has one. */
  Map<Integer, Long> positions() {
    Map<Integer, Long> out = new TreeMap<>();
    query(
        "SELECT kafka_partition, next_offset FROM sink_offsets",
        rs -> out.put(rs.getInt(1), rs.getLong(2)));
    return out;
  }

  /** The records of its topic the sink set aside, as {@code <partition>/<offset>}. */
  Set<String> rejected() {
    Set<String> out = new HashSet<>();
    query(
        "SELECT kafka_partition, kafka_offset FROM sink_rejected",
        rs -> out.add(rs.getInt(1) + "/" + rs.getLong(2)));
    return out;
  }

  /** The ranges of its topic an operator accepted as never stored. */
  List<Gap> gaps() {
    List<Gap> out = new ArrayList<>();
    query(
        "SELECT kafka_partition, from_offset, to_offset FROM sink_gaps",
        rs -> out.add(new Gap(rs.getInt(1), rs.getLong(2), rs.getLong(3))));
    return out;
  }

  private interface RowReader {
    void read(ResultSet rs) throws SQLException;
  }

  /** {@code select} of the sink's group and topic, each row to {@code reader}. */
  private void query(String select, RowReader reader) {
    try (PreparedStatement s =
        connection.prepareStatement(select + " WHERE consumer_group = ? AND topic = ?")) {
      s.setString(1, config.groupId());
      s.setString(2, config.topic());
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          reader.read(rs);
        }
      }
    } catch (SQLException e) {
      throw failed(config, e);
    }
  }

  /**
   * The rows of {@code requestIds} and the sink's position on {@code partitions} of its topic, now;
   * a database that cannot be read is said so, as the trace's other parts do.
   */
  static Now now(SinkConfig config, Collection<String> requestIds, Collection<Integer> partitions) {
    String database = SinkConnections.masked(config.databaseUrl());
    try (SinkRows s = open(config)) {
      Map<String, Row> found = s.rows(requestIds);
      Map<String, Row> rows = new LinkedHashMap<>();
      requestIds.forEach(id -> rows.put(id, found.get(id)));
      Map<Integer, Long> stored = s.positions();
      Map<String, Long> positions = new LinkedHashMap<>();
      partitions.forEach(p -> positions.put(config.topic() + "/" + p, stored.get(p)));
      return new Now(database, config.groupId(), TABLE, rows, positions, null);
    } catch (Unreadable e) {
      return new Now(
          database,
          config.groupId(),
          TABLE,
          Map.of(),
          Map.of(),
          "unknown (" + e.getMessage() + ")");
    }
  }

  private static Unreadable failed(SinkConfig config, SQLException e) {
    return new Unreadable(
        "the sink's database "
            + SinkConnections.masked(config.databaseUrl())
            + " (SINK_DATABASE_URL) could not be read: "
            + e.getMessage(),
        e);
  }

  @Override
  public void close() {
    try {
      connection.close();
    } catch (SQLException e) {
      // Read only: nothing is lost with the connection.
    }
  }
}
