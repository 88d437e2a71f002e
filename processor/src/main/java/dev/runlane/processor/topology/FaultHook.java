package dev.runlane.processor.topology;

import java.util.Collection;

/**
 * A test seam at the one point DESIGN §6 says must be crash-tested: after Redis says done, before
 * Kafka commits. Production uses {@link #NONE}.
 */
@FunctionalInterface
public interface FaultHook {
  FaultHook NONE = requestIds -> {};

  void afterMarkDone(Collection<String> requestIds);
}
