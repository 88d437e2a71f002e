package dev.runlane.processor.topology;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicEnsurer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a record must clear to be parked: its size limits, the envelope's decoding, and its key
 * being the envelope's run id (design.md §6.2, §6.4). A record that fails is dead-lettered here.
 */
final class Intake {
  /** The processor's log lines keep its logger name, which log settings and filters know. */
  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  /**
   * Input headers past this would not fit our outputs once we add ours: records are sized for a
   * body plus {@link TopicEnsurer#RECORD_OVERHEAD_BYTES}. Such a record goes the way of a body that
   * is too large, rather than fail the producer and the stream thread with it.
   */
  static final int MAX_HEADER_BYTES = TopicEnsurer.RECORD_OVERHEAD_BYTES * 3 / 4;

  private final EnvelopeParser parser;
  private final int maxBodyBytes;
  private final ReplayRanges ranges;
  private final Outputs outputs;
  private final ProcessorMetrics metrics;

  Intake(
      EnvelopeParser parser,
      int maxBodyBytes,
      ReplayRanges ranges,
      Outputs outputs,
      ProcessorMetrics metrics) {
    this.parser = parser;
    this.maxBodyBytes = maxBodyBytes;
    this.ranges = ranges;
    this.outputs = outputs;
    this.metrics = metrics;
  }

  /**
   * The envelope of {@code record}, read at {@code metadata}, or null when the record was
   * dead-lettered (too large, not an envelope, or keyed by another run than its envelope's).
   */
  Envelope admit(Record<String, byte[]> record, RecordMetadata metadata) {
    if ((record.value() != null && record.value().length > maxBodyBytes)
        || headerBytes(record.headers()) > MAX_HEADER_BYTES) {
      tooLarge(record, metadata);
      return null;
    }
    long offset = metadata.offset();
    Envelope envelope;
    try {
      envelope = parser.parse(record.value() == null ? new byte[0] : record.value());
    } catch (EnvelopeException e) {
      toDeadLetters(record, offset, e.code(), e.getMessage());
      return null;
    }
    if (!envelope.runId().equals(record.key())) {
      // The key decides the partition, so the run's order guard lives with the key's partition.
      toDeadLetters(
          record,
          offset,
          "key_mismatch",
          record.key() == null
              ? "record key is missing or not UTF-8; the envelope's run id is " + envelope.runId()
              : "record key is not the envelope's run id");
      return null;
    }
    return envelope;
  }

  private void toDeadLetters(
      Record<String, byte[]> record, long offset, String reason, String detail) {
    String requestId = RecordHeaders.get(record.headers(), RecordHeaders.REQUEST_ID);
    Replay.Range range = ranges.of(offset, record.headers());
    if (outputs.deadLetter(record, requestId, range, reason, detail)) {
      metrics.invalid();
    } else {
      metrics.replayed(false);
    }
    outputs.decisions().deadLettered(offset, record, requestId, range, true, reason);
  }

  /**
   * A body over PROCESSOR_MAX_BODY_BYTES cannot be copied into our outputs without exceeding their
   * size limits, and retrying could never fix it: dead-letter a reference to the original, which
   * stays in the input topic, instead of the bytes.
   */
  private void tooLarge(Record<String, byte[]> record, RecordMetadata metadata) {
    Replay.Range range = ranges.of(metadata.offset(), record.headers());
    outputs
        .decisions()
        .deadLettered(
            metadata.offset(),
            record,
            RecordHeaders.get(record.headers(), RecordHeaders.REQUEST_ID),
            range,
            true,
            "too_large");
    if (!range.emits()) {
      metrics.replayed(false);
      return;
    }
    int bodyBytes = record.value() == null ? 0 : record.value().length;
    int headerBytes = headerBytes(record.headers());
    boolean headersFit = headerBytes <= MAX_HEADER_BYTES;
    String where = metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset();
    String detail =
        (headersFit
                ? bodyBytes + " bytes > PROCESSOR_MAX_BODY_BYTES=" + maxBodyBytes
                : headerBytes + " bytes of headers > " + MAX_HEADER_BYTES + " (not copied)")
            + "; the record stays at "
            + where;
    metrics.invalid();
    outputs.deadLetterReference(
        record,
        headersFit,
        range,
        metadata.topic() + "/" + metadata.partition() + "/" + metadata.offset(),
        detail);
    log.warn(
        "dead-lettered a reference to a record of {} body and {} header bytes at {} (over the"
            + " limits)",
        bodyBytes,
        headerBytes,
        where);
  }

  private static int headerBytes(Headers headers) {
    int bytes = 0;
    for (Header h : headers) {
      bytes += h.key().length() + (h.value() == null ? 0 : h.value().length);
    }
    return bytes;
  }
}
