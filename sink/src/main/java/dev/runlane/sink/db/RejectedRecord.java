package dev.runlane.sink.db;

import dev.runlane.common.kafka.RecordHeaders;
import java.sql.SQLException;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record of the events topic the sink sets aside in {@code sink_rejected} instead of storing
 * (D61): PostgreSQL refused its row, or it could not be read as an event.
 *
 * @param record the record as read
 * @param requestId its request id as far as it is known (the envelope's, else the ingress's header)
 * @param runId its run id likewise (the envelope's, else the record key)
 * @param sqlState PostgreSQL's error code, or null when no row was tried
 * @param reason what was wrong, in one line
 */
public record RejectedRecord(
    ConsumerRecord<String, byte[]> record,
    String requestId,
    String runId,
    String sqlState,
    String reason) {

  /** A record whose row PostgreSQL refused. */
  public static RejectedRecord refused(
      ConsumerRecord<String, byte[]> record, String requestId, String runId, SQLException e) {
    return new RejectedRecord(record, requestId, runId, e.getSQLState(), SqlFailure.message(e));
  }

  /** A record that is no event the sink can read; its ids come from the headers and the key. */
  public static RejectedRecord undecodable(ConsumerRecord<String, byte[]> record, String reason) {
    return new RejectedRecord(
        record,
        RecordHeaders.get(record.headers(), RecordHeaders.REQUEST_ID),
        record.key(),
        null,
        reason);
  }

  /** An id for a log line: at most 64 characters, a U+0000 shown as {@code \u0000}. */
  public static String excerpt(String id) {
    if (id == null) {
      return null;
    }
    String cut = id.length() > 64 ? id.substring(0, 64) + "..." : id;
    return cut.replace("\u0000", "\\u0000");
  }

  /** Where it was, as {@code topic/partition/offset}. */
  public String coordinates() {
    return record.topic() + "/" + record.partition() + "/" + record.offset();
  }
}
