package dev.runlane.local.verify;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of a verification: the checks and the counts behind them.
 *
 * @param checks every check, in the order they were made
 * @param counts named counts (sent, acked, applied, duplicates by layer, ...), in print order
 */
public record Report(List<Check> checks, Map<String, Long> counts) {

  public Report {
    checks = List.copyOf(checks);
    counts = Collections.unmodifiableMap(new LinkedHashMap<>(counts));
  }

  /** Whether every check passed. */
  public boolean passed() {
    return checks.stream().allMatch(Check::passed);
  }

  /** A count by name, 0 when absent. */
  public long count(String name) {
    return counts.getOrDefault(name, 0L);
  }

  /** A printable, multi-line summary: counts, then one line per check, then the verdict. */
  public String summary() {
    StringBuilder sb = new StringBuilder();
    sb.append("verification report\n");
    int width = counts.keySet().stream().mapToInt(String::length).max().orElse(0);
    counts.forEach(
        (name, value) ->
            sb.append("  ")
                .append(name)
                .append(" ".repeat(width - name.length()))
                .append("  ")
                .append(value)
                .append('\n'));
    sb.append("checks\n");
    for (Check c : checks) {
      sb.append("  [")
          .append(c.passed() ? "PASS" : "FAIL")
          .append("] ")
          .append(c.name())
          .append(": ")
          .append(c.detail())
          .append('\n');
    }
    sb.append(passed() ? "PASSED" : "FAILED")
        .append(" (")
        .append(checks.stream().filter(Check::passed).count())
        .append('/')
        .append(checks.size())
        .append(" checks)");
    return sb.toString();
  }

  @Override
  public String toString() {
    return summary();
  }
}
