package dev.runlane.processor.topology;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The run-event processors of each stream thread. A thread's tasks take turns on it, so the first
 * of them to ask Redis in a batch interval can carry the others' claims and done markers in the
 * same round trip: about one trip per interval per thread instead of one per task (D25).
 *
 * <p>One instance per built topology, so that two applications in one JVM never share a trip.
 */
final class ThreadTasks {
  private final ThreadLocal<List<RunEventProcessor>> byThread =
      ThreadLocal.withInitial(CopyOnWriteArrayList::new);

  /**
   * The calling thread's processors, with {@code processor} among them. The processor keeps the
   * list and leaves it at close, on whichever thread closes it.
   */
  List<RunEventProcessor> join(RunEventProcessor processor) {
    List<RunEventProcessor> peers = byThread.get();
    if (!peers.contains(processor)) { // a revived task is initialised again
      peers.add(processor);
    }
    return peers;
  }
}
