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
import java.sql.Savepoint;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

  /**
   * Inserts the rows in the caller's transaction; a row already there (a re-read) stays. Each row
   * under a savepoint: a row this table cannot take either (an id the database's encoding has no
   * character for, a timestamp out of range) is written again with its coordinates, the SQLSTATE,
   * ASCII text and the raw bytes alone, so that setting a record aside never stalls the sink.
   */
  void insert(Connection c, List<RejectedRecord> rejected) throws SQLException {
    if (rejected.isEmpty()) {
      return;
    }
    try (PreparedStatement s = c.prepareStatement(INSERT)) {
      for (RejectedRecord r : rejected) {
        Savepoint savepoint = c.setSavepoint();
        try {
          bind(s, r, false);
          s.executeUpdate();
        } catch (SQLException e) {
          if (SqlFailure.of(e) != SqlFailure.RECORD) {
            throw e;
          }
          c.rollback(savepoint);
          bind(s, r, true);
          s.executeUpdate();
        }
        c.releaseSavepoint(savepoint);
      }
    }
  }

  private void bind(PreparedStatement s, RejectedRecord r, boolean asciiOnly) throws SQLException {
    var record = r.record();
    s.setString(1, group);
    s.setString(2, record.topic());
    s.setInt(3, record.partition());
    s.setLong(4, record.offset());
    s.setString(5, text(r.requestId(), asciiOnly));
    s.setString(6, text(r.runId(), asciiOnly));
    s.setString(7, r.sqlState());
    s.setString(8, r.reason() == null ? "unknown" : text(r.reason(), asciiOnly));
    s.setBytes(9, record.key() == null ? null : record.key().getBytes(StandardCharsets.UTF_8));
    s.setBytes(10, record.value());
    s.setString(11, asciiOnly ? null : headersJson(record.headers()));
    s.setTimestamp(
        12, asciiOnly || record.timestamp() < 0 ? null : new Timestamp(record.timestamp()));
  }

  private static String text(String s, boolean asciiOnly) {
    String storable = storable(s);
    return asciiOnly ? ascii(storable) : storable;
  }

  /** Every character outside printable ASCII as {@code \\uXXXX}: text any encoding holds. */
  static String ascii(String s) {
    if (s == null) {
      return null;
    }
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch >= 0x20 && ch < 0x7f) {
        sb.append(ch);
      } else {
        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
      }
    }
    return sb.toString();
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
