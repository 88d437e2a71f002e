package dev.runlane.processor.topology;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Outcome;
import dev.runlane.processor.dedup.Recorded;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Writes one task's decisions to the decision log (design.md §6.8, D86): one record per input
 * record, forwarded to the log's sink in the transaction that forwards the decision's outputs, so
 * that a decision is recorded exactly when its outputs are. With the log off there is no sink, and
 * nothing is built or forwarded.
 */
final class DecisionLog {
  private final ProcessorContext<String, byte[]> context; // null: the log is off
  private final TopologySettings settings;
  private final String input;
  private final int partition;

  DecisionLog(ProcessorContext<String, byte[]> context, TopologySettings settings) {
    this.context = settings.logsDecisions() ? context : null;
    this.settings = settings;
    this.input = settings.topics().webhooks();
    this.partition = context.taskId().partition();
  }

  /**
   * An event decided by the decision table, {@code table}, and then by the reorder window, {@code
   * outcome}, on {@code claim} and {@code recorded}.
   */
  void decided(
      long offset,
      PendingEvent event,
      Claim claim,
      Recorded recorded,
      Outcome table,
      Outcome outcome,
      Replay.Range range) {
    if (context == null) {
      return;
    }
    Decision.Outcome logged =
        switch (outcome) {
          case APPLY -> Decision.Outcome.APPLIED;
          case DUPLICATE_REDIS, DUPLICATE_STORE -> Decision.Outcome.DUPLICATE;
          case STALE -> Decision.Outcome.STALE;
          case HELD -> Decision.Outcome.HELD;
          case REUSED, REUSED_STORE -> Decision.Outcome.REUSED;
          case WAIT -> throw new IllegalStateException("WAIT is no decision");
        };
    String output =
        switch (logged) {
          case APPLIED -> settings.topics().events();
          case STALE -> settings.topics().stale();
          case REUSED -> settings.topics().dlq();
          default -> null;
        };
    String reason = logged == Decision.Outcome.REUSED ? "request_id_reused" : null;
    write(
        offset,
        event.runId(),
        event.requestId(),
        event.headers(),
        range,
        logged,
        layer(claim, recorded, table, outcome),
        reason,
        output,
        event.timestamp());
  }

  /** A held event applied as its window passed: the second record of its input record. */
  void released(long offset, PendingEvent event, Replay.Range range) {
    if (context != null) {
      write(
          offset,
          event.runId(),
          event.requestId(),
          event.headers(),
          range,
          Decision.Outcome.RELEASED,
          "window",
          null,
          settings.topics().events(),
          event.timestamp());
    }
  }

  /**
   * A record dead-lettered with {@code reason}: by the intake ({@code invalid}: not an envelope,
   * too large, keyed by another run), or otherwise ({@code dead-lettered}).
   */
  void deadLettered(
      long offset,
      Record<String, byte[]> record,
      String requestId,
      Replay.Range range,
      boolean invalid,
      String reason) {
    if (context != null) {
      write(
          offset,
          record.key(),
          requestId,
          record.headers(),
          range,
          invalid ? Decision.Outcome.INVALID : Decision.Outcome.DEAD_LETTERED,
          invalid ? "intake" : "attempts",
          reason,
          settings.topics().dlq(),
          record.timestamp());
    }
  }

  /** A parked event dead-lettered with {@code reason} after its attempts were spent (D43). */
  void deadLettered(long offset, PendingEvent event, Replay.Range range, String reason) {
    if (context != null) {
      write(
          offset,
          event.runId(),
          event.requestId(),
          event.headers(),
          range,
          Decision.Outcome.DEAD_LETTERED,
          "attempts",
          reason,
          settings.topics().dlq(),
          event.timestamp());
    }
  }

  private void write(
      long offset,
      String runId,
      String requestId,
      Headers headers,
      Replay.Range range,
      Decision.Outcome outcome,
      String layer,
      String reason,
      String output,
      long timestamp) {
    boolean silent = !range.emits();
    Decision d =
        new Decision(
            requestId,
            runId,
            input,
            partition,
            offset,
            settings.generation(),
            range == Replay.Range.SILENT || range == Replay.Range.MARKED
                ? settings.replay().id()
                : null,
            // A replay re-derives silently what an earlier generation decided and wrote (D35):
            // what it decided is kept as the reason, and nothing was written.
            silent ? Decision.Outcome.RE_DERIVED : outcome,
            layer,
            silent ? outcome.tag() : reason,
            silent ? null : output,
            receivedAt(headers),
            context.currentSystemTimeMs());
    context.forward(new Record<>(runId, d.toBytes(), timestamp), ProcessorTopology.DECISIONS_SINK);
  }

  /** The ingress's receive time, or null for a record that does not carry it. */
  private static Long receivedAt(Headers headers) {
    String at = RecordHeaders.get(headers, RecordHeaders.RECEIVED_AT);
    if (at == null) {
      return null;
    }
    try {
      return Long.parseLong(at);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * The part that decided: the batch (a second copy in it), Redis (a marker), the task's record of
   * decided ids, the reorder window (a copy of a held event), or the run store's head.
   */
  static String layer(Claim claim, Recorded recorded, Outcome table, Outcome outcome) {
    return switch (outcome) {
      case DUPLICATE_REDIS -> claim == Claim.EARLIER_IN_BATCH ? "batch" : "redis";
      case DUPLICATE_STORE ->
          table == Outcome.APPLY ? "window" : recorded == Recorded.APPLIED ? "record" : "store";
      case REUSED_STORE -> "record";
      case HELD -> "window";
      case REUSED -> claim == Claim.OTHER_RUN ? "redis" : "store";
      case APPLY, STALE, WAIT -> "store";
    };
  }
}
