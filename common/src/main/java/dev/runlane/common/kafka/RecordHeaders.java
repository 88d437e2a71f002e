package dev.runlane.common.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** Names of the Kafka record headers runlane writes, and UTF-8 helpers to read and write them. */
public final class RecordHeaders {

  /** The envelope's request id (the dedup key). */
  public static final String REQUEST_ID = "request_id";

  /** The envelope's created_at as an ISO-8601 instant, e.g. {@code 2026-11-29T10:00:00.123Z}. */
  public static final String CREATED_AT = "created_at";

  /** When the ingress received the request: epoch milliseconds as a decimal string. */
  public static final String RECEIVED_AT = "received_at";

  /** The configured source (route) the webhook came in on, e.g. {@code sume}. */
  public static final String SOURCE = "source";

  /** Why a record went to the dead-letter topic: a stable code, e.g. {@code missing_field}. */
  public static final String DLQ_REASON = "dlq.reason";

  /** A human-readable detail of {@link #DLQ_REASON}. */
  public static final String DLQ_DETAIL = "dlq.detail";

  /**
   * Where the body of a record dead-lettered by reference (too large to copy) stays: {@code
   * <topic>/<partition>/<offset>} of the input, which {@code runlane dlq redrive} reads it from.
   */
  public static final String DLQ_SOURCE = "dlq.source";

  /** On a re-driven record: the DLQ record it came from, {@code <topic>/<partition>/<offset>}. */
  public static final String REDRIVEN_FROM = "dlq.redriven_from";

  /** Prefix of copied HTTP headers: {@code http.<lower-case header name>}. */
  public static final String HTTP_PREFIX = "http.";

  private RecordHeaders() {}

  /** The record header name of a copied HTTP header: {@code http.} + its name in lower case. */
  public static String http(String httpHeaderName) {
    return HTTP_PREFIX + httpHeaderName.toLowerCase(Locale.ROOT);
  }

  /** The last value of the header as UTF-8, or null when absent or null. */
  public static String get(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    if (header == null || header.value() == null) {
      return null;
    }
    return new String(header.value(), StandardCharsets.UTF_8);
  }

  /**
   * Sets the header to one UTF-8 value, replacing any earlier value; a null value only removes it.
   *
   * @throws IllegalStateException if the headers are read-only (already sent)
   */
  public static void put(Headers headers, String name, String value) {
    headers.remove(name);
    if (value != null) {
      headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
  }
}
