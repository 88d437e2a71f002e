package dev.runlane.sink.db;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;

/**
 * The {@code sink_rejected} table: records set aside instead of stored (D61), written in their
 * batch's transaction and read by {@code runlane sink rejected}.
 */
public final class RejectedTable {

  /** The longest id or reason kept in a text column; the exact bytes are in record_value. */
  static final int MAX_TEXT = 256;

  private static final JsonFactory JSON = new JsonFactory();

  private static final String INSERT =
      "INSERT INTO sink_rejected (consumer_group, topic, kafka_partition, kafka_offset,"
          + " request_id, run_id, sqlstate, reason, record_key, record_value, record_headers,"
          + " received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)"
          + " ON CONFLICT DO NOTHING";

  private static final String LIST =
      "SELECT topic, kafka_partition, kafka_offset, request_id, run_id, sqlstate, reason,"
          + " rejected_at FROM sink_rejected WHERE consumer_group = ?"
          + " ORDER BY rejected_at DESC, topic, kafka_partition, kafka_offset LIMIT ?";

  private static final String COUNT = "SELECT count(*) FROM sink_rejected WHERE consumer_group = ?";

  /** One row as listed. */
  public record Row(
      String topic,
      int partition,
      long offset,
      String requestId,
      String runId,
      String sqlState,
      String reason,
      Instant rejectedAt) {}

  private final String group;

  public RejectedTable(String group) {
    this.group = group;
  }

  /** Inserts the rows in the caller's transaction; a row already there (a re-read) stays. */
  void insert(Connection c, List<RejectedRecord> rejected) throws SQLException {
    if (rejected.isEmpty()) {
      return;
    }
    try (PreparedStatement s = c.prepareStatement(INSERT)) {
      for (RejectedRecord r : rejected) {
        var record = r.record();
        s.setString(1, group);
        s.setString(2, record.topic());
        s.setInt(3, record.partition());
        s.setLong(4, record.offset());
        s.setString(5, storable(r.requestId()));
        s.setString(6, storable(r.runId()));
        s.setString(7, r.sqlState());
        s.setString(8, r.reason() == null ? "unknown" : storable(r.reason()));
        s.setBytes(9, record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8));
        s.setBytes(10, record.value());
        s.setString(11, headersJson(record.headers()));
        s.setTimestamp(12, record.timestamp() < 0 ? null : new Timestamp(record.timestamp()));
        s.addBatch();
      }
      s.executeBatch();
    }
  }

  /** The newest rows first, at most {@code limit}. */
  public List<Row> newest(Connection c, int limit) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (PreparedStatement s = c.prepareStatement(LIST)) {
      s.setString(1, group);
      s.setInt(2, limit);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new Row(
                  rs.getString(1),
                  rs.getInt(2),
                  rs.getLong(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  rs.getString(7),
                  rs.getTimestamp(8).toInstant()));
        }
      }
    }
    return rows;
  }

  /** How many rows the group has. */
  public long count(Connection c) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(COUNT)) {
      s.setString(1, group);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Text any PostgreSQL text column takes: U+0000 (which no text column holds) shown as U+FFFD, cut
   * to {@value #MAX_TEXT} characters (an id over the btree limit would fail this row too).
   */
  static String storable(String s) {
    if (s == null) {
      return null;
    }
    String cut = s;
    if (s.length() > MAX_TEXT) {
      int end = Character.isHighSurrogate(s.charAt(MAX_TEXT - 1)) ? MAX_TEXT - 1 : MAX_TEXT;
      cut = s.substring(0, end) + "…";
    }
    return cut.replace('\u0000', '\uFFFD');
  }

  private static String headersJson(Iterable<Header> headers) {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      for (Header h : headers) {
        g.writeStringField(
            storable(h.key()),
            h.value() == null ? null : storable(new String(h.value(), StandardCharsets.UTF_8)));
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }
}
