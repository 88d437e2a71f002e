package dev.runlane.processor.topology;

import java.util.Collection;

/**
 * A test seam right after done markers were written, for the crash DESIGN §6 says must be tested:
 * after Redis says done, before Kafka commits. Markers are written one drain after their decision
 * (D22), so a commit may come in between; a test that needs the crash before the commit sets a
 * commit interval much longer than the batch interval. Production uses {@link #NONE}.
 */
@FunctionalInterface
public interface FaultHook {
  FaultHook NONE = requestIds -> {};

  void afterMarkDone(Collection<String> requestIds);
}
