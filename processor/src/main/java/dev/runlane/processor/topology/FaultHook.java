package dev.runlane.processor.topology;

import java.util.Collection;

/**
 * A test seam right after done markers were written, for the crash DESIGN §6 says must be tested:
 * after Redis says done, before Kafka commits. Markers are written by the next round trip after
 * their decision, at most a drain later, and that trip may be another task's of the same stream
 * thread, in whose punctuator the hook then runs (D22, D25). A commit may come in between; a test
 * that needs the crash before the commit sets a commit interval much longer than the batch
 * interval. Production uses {@link #NONE}.
 */
@FunctionalInterface
public interface FaultHook {
  FaultHook NONE = requestIds -> {};

  void afterMarkDone(Collection<String> requestIds);
}
