package dev.runlane.processor.runs;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The heads of a task's most recently used runs, in front of its run store. A decision needs only a
 * run's head (D32), and a run's webhooks come in bursts, so most reads of the store can be skipped.
 * Those reads, RocksDB gets through the transactional store's write batch, took 9.6% of the stream
 * thread's wall time at 3,500 events/s (D33).
 *
 * <p>Correct only while every write to the store goes through {@link #applied} and the cache lives
 * no longer than the task's view of the store: the processor makes a new one in {@code init()}
 * (D33).
 *
 * <p>Confined to its task's stream thread.
 */
public final class RunHeads {

  /** Marks a run the store does not hold yet, so that a new run is read once, not per event. */
  private static final RunState.Head ABSENT = new RunState.Head("", null, 0);

  private final Map<String, RunState.Head> heads;

  /**
   * @param capacity the most runs held; the least recently used one goes first
   */
  public RunHeads(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
    }
    this.heads =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, RunState.Head> eldest) {
            return size() > capacity;
          }
        };
  }

  /**
   * The run's head, or null for a run the store does not hold; {@code store} reads and decodes it
   * from the store when it is not cached.
   */
  public RunState.Head get(String runId, Function<String, RunState.Head> store) {
    RunState.Head head = heads.get(runId);
    if (head == null) {
      head = store.apply(runId);
      heads.put(runId, head == null ? ABSENT : head);
      return head;
    }
    return head == ABSENT ? null : head;
  }

  /** Records the head just written to the store for {@code runId}. */
  public void applied(String runId, RunState.Head head) {
    heads.put(runId, head);
  }

  public int size() {
    return heads.size();
  }
}
