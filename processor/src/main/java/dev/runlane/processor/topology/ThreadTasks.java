package dev.runlane.processor.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The run-event processors of each stream thread. A thread's tasks take turns on it, so the first
 * of them to claim in a batch interval can carry the others' claims and done markers in the same
 * round trip: under steady load about one trip per interval per thread instead of one per task
 * (D25). A drain with only markers to write still writes its own.
 *
 * <p>One instance per built topology, so that two applications in one JVM never share a trip.
 */
final class ThreadTasks {
  private final ThreadLocal<Group> byThread = ThreadLocal.withInitial(Group::new);

  /** One stream thread's processors, and where in each batch interval they drain. */
  static final class Group {
    /**
     * Only ever touched by the group's thread: each processor joins at init and leaves at close.
     */
    final List<RunEventProcessor> members = new ArrayList<>();

    /**
     * A random fraction of the batch interval, so that the threads and instances sharing a Redis do
     * not all reach it at the same instants.
     */
    final double phase = ThreadLocalRandom.current().nextDouble();

    /** The first drain time after {@code nowMillis} on this group's grid. */
    long nextDrain(long nowMillis, long everyMillis) {
      long offset = (long) (phase * everyMillis);
      return Math.floorDiv(nowMillis - offset, everyMillis) * everyMillis + everyMillis + offset;
    }
  }

  /** The calling thread's group. */
  Group current() {
    return byThread.get();
  }

  /**
   * The calling thread's group, with {@code processor} in it. The processor keeps the group and
   * leaves it at close.
   */
  Group join(RunEventProcessor processor) {
    Group group = current();
    if (!group.members.contains(processor)) { // a revived task is initialised again
      group.members.add(processor);
    }
    return group;
  }
}
