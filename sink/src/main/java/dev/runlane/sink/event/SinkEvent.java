package dev.runlane.sink.event;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * One applied event of {@code sume.events}, as the sink stores it.
 *
 * @param requestId the dedup key: the primary key of {@code processed_events}
 * @param runId the run
 * @param createdAt the order key, with {@code requestId}
 * @param type the event type, or null
 * @param data the event's {@code data} as JSON text, or null when it has none (or JSON null)
 * @param updatedAt the record's timestamp: when the ingress received it, as {@code updated_at} of
 *     the run's state in {@code /runs/{id}}
 * @param replay the replay that emitted it again ({@code runlane.replay}), or null
 * @param source the record it was read from: its coordinates, and its bytes for the rejected table
 *     should PostgreSQL refuse the row (D61)
 */
public record SinkEvent(
    String requestId,
    String runId,
    Instant createdAt,
    String type,
    String data,
    Instant updatedAt,
    String replay,
    ConsumerRecord<String, byte[]> source) {

  /**
   * The order runs move forward in: ({@code created_at}, {@code request_id}), request ids by code
   * point as PostgreSQL's {@code "C"} collation orders their UTF-8 bytes, so that the newest event
   * of a batch is the one the database's guard would keep.
   */
  public static final Comparator<SinkEvent> ORDER =
      Comparator.comparing(SinkEvent::createdAt)
          .thenComparing(SinkEvent::requestId, SinkEvent::compareCodePoints);

  /**
   * {@code created_at} to the microsecond, which is what a {@code timestamptz} holds; the rest of
   * its nanoseconds go in a column of their own, so the stored order is the processor's.
   */
  public Instant createdAtMicros() {
    return createdAt.truncatedTo(ChronoUnit.MICROS);
  }

  /** Its partition in the topic. */
  public int partition() {
    return source.partition();
  }

  /** Its offset in the partition. */
  public long offset() {
    return source.offset();
  }

  /** The nanoseconds of {@code created_at} within its second. */
  public int createdAtNanos() {
    return createdAt.getNano();
  }

  static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Boolean.compare(i < a.length(), j < b.length());
  }
}
