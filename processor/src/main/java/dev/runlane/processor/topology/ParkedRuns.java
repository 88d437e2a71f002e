package dev.runlane.processor.topology;

import java.util.HashMap;
import java.util.Map;

/**
 * How many parked (read, not yet decided) events each run of one task has, kept next to the pending
 * store so that the reorder window can tell without reading the store whether releasing a run's
 * held events now would change what one of its parked events is decided against (D60).
 */
final class ParkedRuns {
  private final Map<String, Integer> counts = new HashMap<>();

  void parked(String runId) {
    counts.merge(runId, 1, Integer::sum);
  }

  void decided(String runId) {
    counts.computeIfPresent(runId, (run, n) -> n == 1 ? null : n - 1);
  }

  boolean has(String runId) {
    return counts.containsKey(runId);
  }
}
