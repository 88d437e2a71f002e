package dev.runlane.processor.topology;

import static dev.runlane.common.kafka.RecordHeaders.DLQ_DETAIL;
import static dev.runlane.common.kafka.RecordHeaders.DLQ_REASON;
import static dev.runlane.common.kafka.RecordHeaders.DLQ_SOURCE;
import static dev.runlane.common.kafka.RecordHeaders.put;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.runs.RunState;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one writer of a task's outputs (design.md §7.1): an applied event and its run's new state, a
 * stale event, a dead letter, and through its {@link DecisionLog} the decision that wrote them.
 * Each output carries the replay's id when a reprocess emits it again, and a record of a range that
 * an earlier generation emitted is written nowhere (D35).
 */
final class Outputs {
  /** The processor's log lines keep its logger name, which log settings and filters know. */
  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  private final ProcessorContext<String, byte[]> context;
  private final TopologySettings settings;
  private final ProcessorMetrics metrics;
  private final DecisionLog decisions;

  Outputs(
      ProcessorContext<String, byte[]> context,
      TopologySettings settings,
      ProcessorMetrics metrics) {
    this.context = context;
    this.settings = settings;
    this.metrics = metrics;
    this.decisions = new DecisionLog(context, settings);
  }

  /** Where each decision is recorded, in the transaction of these outputs (D86). */
  DecisionLog decisions() {
    return decisions;
  }

  /** An event applied to its run: the event to {@code sume.events}, {@code runState} to runs. */
  void applied(PendingEvent event, byte[] runState, Replay.Range range) {
    if (!range.emits()) {
      return; // an earlier generation emitted it, and sume.runs holds this state already
    }
    context.forward(
        new Record<>(event.runId(), event.raw(), event.timestamp(), output(event.headers(), range)),
        ProcessorTopology.EVENTS_SINK);
    context.forward(
        new Record<>(event.runId(), runState, event.timestamp(), output(null, range)),
        ProcessorTopology.RUNS_SINK);
    if (range != Replay.Range.MARKED) {
      metrics.applied(event.headers());
    }
  }

  /** An event older than its run's state {@code current}: listed in the stale stream. */
  void stale(PendingEvent event, RunState.Head current, Replay.Range range) {
    if (!range.emits()) {
      return; // listed by the generation that decided it first
    }
    Headers headers = output(event.headers(), range);
    put(headers, "stale.last_request_id", current.lastRequestId());
    put(headers, "stale.last_created_at", current.lastCreatedAt().toString());
    context.forward(
        new Record<>(event.runId(), event.raw(), event.timestamp(), headers),
        ProcessorTopology.STALE_SINK);
    log.info(
        "stale request_id={} run_id={} created_at={} last_created_at={}",
        event.requestId(),
        event.runId(),
        event.createdAt(),
        current.lastCreatedAt());
  }

  /** A parked event to the DLQ with its reason and detail. */
  void deadLetter(PendingEvent event, Replay.Range range, String reason, String detail) {
    deadLetter(
        new Record<>(event.runId(), event.raw(), event.timestamp(), event.headers()),
        event.requestId(),
        range,
        reason,
        detail);
  }

  /**
   * Writes {@code record} to the DLQ with its reason and detail.
   *
   * @return false, writing nothing, when the generation that read it first dead-lettered it (D35)
   */
  boolean deadLetter(
      Record<String, byte[]> record,
      String requestId,
      Replay.Range range,
      String reason,
      String detail) {
    if (!range.emits()) {
      return false;
    }
    Headers headers = output(record.headers(), range);
    put(headers, DLQ_REASON, reason);
    put(headers, DLQ_DETAIL, detail);
    context.forward(record.withHeaders(headers), ProcessorTopology.DLQ_SINK);
    log.warn(
        "dead-lettered request_id={} run_id={} reason={}: {}",
        requestId,
        record.key(),
        reason,
        detail);
    return true;
  }

  /**
   * Writes to the DLQ, as {@code too_large}, a record with no value that names where {@code record}
   * stays in the input ({@code source}), with its headers when they fit (D14). The caller checked
   * that the range emits.
   */
  void deadLetterReference(
      Record<String, byte[]> record,
      boolean withHeaders,
      Replay.Range range,
      String source,
      String detail) {
    Headers headers = output(withHeaders ? record.headers() : null, range);
    put(headers, DLQ_REASON, "too_large");
    put(headers, DLQ_SOURCE, source);
    put(headers, DLQ_DETAIL, detail);
    context.forward(
        new Record<String, byte[]>(record.key(), null, record.timestamp(), headers),
        ProcessorTopology.DLQ_SINK);
  }

  /**
   * The headers of an output record: a copy of {@code headers} (or none), with the replay's id when
   * a reprocess emits it again, so consumers can tell it from the first time (D35).
   */
  private Headers output(Headers headers, Replay.Range range) {
    Headers out = headers == null ? new RecordHeaders() : new RecordHeaders(headers.toArray());
    if (range == Replay.Range.MARKED) {
      put(out, Replay.HEADER, settings.replay().id());
    }
    return out;
  }
}
