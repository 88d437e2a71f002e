package dev.runlane.local.verify;

import dev.runlane.local.simulator.Ledger;
import dev.runlane.local.simulator.Ledger.Failure;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The named counts a {@link Report} prints, in print order: what the simulator sent and injected,
 * what the pipeline did with it (applied, stale, held, duplicates by layer, the sink's database),
 * and what the checks found missing or doubled.
 */
final class ReportCounts {

  private ReportCounts() {}

  /** The counts; {@code database} is null when the pipeline has no sink. */
  static Map<String, Long> of(
      Ledger ledger,
      SentEvents sent,
      Downstream down,
      DecisionLogCounts decisions,
      DatabaseCheck.Result database,
      DownstreamChecks.Result checks) {
    Map<String, Long> counts = new LinkedHashMap<>();
    counts.put("events generated", (long) sent.size());
    counts.put("events acked", (long) sent.acked().size());
    counts.put("runs", (long) sent.byRun().size());
    counts.put("deliveries", ledger.deliveries());
    counts.put("attempts", ledger.attempts());
    counts.put("retries", ledger.retries());
    counts.put("failed attempts: connection", ledger.failures(Failure.CONNECTION));
    counts.put("failed attempts: timeout", ledger.failures(Failure.TIMEOUT));
    counts.put("failed attempts: http error", ledger.failures(Failure.HTTP_ERROR));
    counts.put("failed attempts: redirect", ledger.failures(Failure.REDIRECT));
    counts.put("deliveries given up", ledger.gaveUpDeliveries());
    counts.put("injected: redeliveries after ack", ledger.redeliveries());
    counts.put("injected: concurrent copies", ledger.concurrentCopies());
    counts.put("injected: reordered events", ledger.reordered());
    counts.put("injected: slow acks", ledger.slowAcks());
    counts.put("applied (sume.events)", (long) down.applied().size());
    counts.put("stale (sume.events.stale)", (long) down.stale().size());
    // The per-layer counts come from the decision log, written with the outputs (D86).
    counts.put("decisions recorded", decisions.deciding());
    counts.put("held by the reorder window", decisions.count("held", "window"));
    counts.put("applied again by a reprocess (marked)", down.replayed());
    counts.put("duplicates caught by redis", decisions.count("duplicate", "redis"));
    counts.put("duplicates caught in the batch", decisions.count("duplicate", "batch"));
    counts.put(
        "duplicates caught by the record of decided ids", decisions.count("duplicate", "record"));
    counts.put("duplicates caught by the reorder window", decisions.count("duplicate", "window"));
    counts.put("duplicates caught by run store", decisions.count("duplicate", "store"));
    if (database != null) {
      counts.put("duplicates caught by the database constraint", database.duplicates());
      counts.put("older states refused by the database", database.refused());
      counts.put("rows in processed_events", database.rows());
    }
    counts.put("invalid", decisions.count("invalid", "intake"));
    counts.put("lost", checks.lost());
    counts.put("applied twice", checks.appliedTwice());
    return counts;
  }
}
