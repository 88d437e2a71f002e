package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import java.io.PrintStream;
import java.util.Map;
import java.util.StringJoiner;

/** Prints the ledger: one line per input partition, then the balance or what is unaccounted. */
final class AuditOutput {
  private AuditOutput() {}

  static void text(Ledger.Result r, String logTopic, PrintStream out) {
    out.printf(
        "ledger of generation %d: input %s, application id %s, decision log %s%s%n",
        r.generation().number(),
        r.generation().input(),
        r.generation().applicationId(),
        logTopic,
        r.since() == null ? "" : ", input records since " + r.since());
    if (r.floor() != null) {
      out.printf("  (older input records are not audited: %s)%n", r.floor());
    }
    long received = 0;
    for (Ledger.Balance b : r.partitions()) {
      received += b.received();
      if (b.committed() < 0) {
        out.printf(
            "  %s/%d: no committed offset: nothing decided there yet, not audited%n",
            r.generation().input(), b.partition());
        continue;
      }
      out.printf(
          "  %s/%d: offsets %d..%d (committed): %d input records, %d decided (%s), %d still held,"
              + " %d unaccounted%n",
          r.generation().input(),
          b.partition(),
          b.from(),
          b.committed(),
          b.received(),
          b.decided().values().stream().mapToLong(Long::longValue).sum(),
          outcomes(b.decided()),
          b.stillHeld(),
          b.unaccounted());
    }
    if (r.sink() != null) {
      sink(r.sink(), out);
    }
    if (r.balanced()) {
      out.printf(
          "balanced: %d input records, each decided once, every record its decision wrote"
              + " found%n",
          received);
      return;
    }
    out.printf("UNACCOUNTED: %d records; the first:%n", r.unaccountedCount());
    r.unaccounted().forEach(u -> out.printf("  %s%n", u));
  }

  /** The sink's line (D94): what it has read past has its rows; the rest is not in it yet. */
  private static void sink(SinkCheck.Balance s, PrintStream out) {
    long below = s.withRow() + s.missing();
    StringBuilder line =
        new StringBuilder("  sink ")
            .append(s.table())
            .append(": ")
            .append(below)
            .append(" applied events below its position, ")
            .append(
                s.missing() == 0
                    ? "each with its row"
                    : s.withRow() + " with their row, " + s.missing() + " WITHOUT")
            .append("; ")
            .append(s.notYet())
            .append(" not yet in the sink (past its position)");
    if (s.setAside() > 0) {
      line.append("; ").append(s.setAside()).append(" set aside by it (runlane sink rejected)");
    }
    if (s.inGap() > 0) {
      line.append("; ").append(s.inGap()).append(" in ranges accepted as never stored (sink_gaps)");
    }
    out.println(line);
    out.printf("    (database %s, group %s)%n", s.database(), s.group());
  }

  private static String outcomes(Map<Decision.Outcome, Long> decided) {
    StringJoiner j = new StringJoiner(", ");
    decided.forEach((o, n) -> j.add(o.tag() + " " + n));
    return j.length() == 0 ? "none" : j.toString();
  }
}
