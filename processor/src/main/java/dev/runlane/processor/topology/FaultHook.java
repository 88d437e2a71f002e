package dev.runlane.processor.topology;

import java.util.Collection;

/**
 * Test seams. {@link #afterMarkDone} runs right after done markers were written, for the crash
 * design.md §6.2 says must be tested: after Redis says done, before Kafka commits. Markers are
 * written by the task's next round trip after their decision, at most a drain later (D22). A commit
 * may come in between; a test that needs the crash before the commit sets a commit interval much
 * longer than the batch interval. {@link #beforeDecide} runs as each event is decided, for an event
 * whose decision throws (D43). Production uses {@link #NONE}.
 */
@FunctionalInterface
public interface FaultHook {
  FaultHook NONE = requestIds -> {};

  void afterMarkDone(Collection<String> requestIds);

  default void beforeDecide(String requestId) {}
}
