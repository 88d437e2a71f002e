package dev.runlane.processor.topology;

import dev.runlane.processor.dedup.Dedup;

/**
 * One {@link ThreadRoundTrip} per stream thread, for one built topology: two applications in one
 * JVM never share a round trip (D45).
 */
final class SharedRoundTrips {
  private final ThreadLocal<ThreadRoundTrip> byThread;

  SharedRoundTrips(Dedup dedup) {
    this.byThread = ThreadLocal.withInitial(() -> new ThreadRoundTrip(dedup));
  }

  /** The calling stream thread's. */
  ThreadRoundTrip current() {
    return byThread.get();
  }
}
