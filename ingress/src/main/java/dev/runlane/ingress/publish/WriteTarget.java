package dev.runlane.ingress.publish;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * An input topic the ingress writes to, with the count of its writes the broker has not answered
 * yet. Once the ingress moved to another input, the old one is retired: no write starts there any
 * more, and the ingress acknowledges the move only when the count is back to zero (D71).
 */
public final class WriteTarget {
  private final String topic;
  private final AtomicInteger inFlight = new AtomicInteger();
  private volatile boolean retired;

  WriteTarget(String topic) {
    this.topic = topic;
  }

  /** A target that is never retired: the input when nothing follows the control topic. */
  public static WriteTarget fixed(String topic) {
    return new WriteTarget(topic);
  }

  public String topic() {
    return topic;
  }

  /**
   * Counts a write about to start; false (and nothing counted) if the target was retired meanwhile.
   * The count is taken before the flag is read and {@link #retire} sets the flag before it reads
   * the count, so either the write sees the retirement or the retirement sees the write.
   */
  boolean tryAcquire() {
    inFlight.incrementAndGet();
    if (retired) {
      inFlight.decrementAndGet();
      return false;
    }
    return true;
  }

  /** The broker answered (or the write failed): it is no longer in flight. */
  void release() {
    inFlight.decrementAndGet();
  }

  void retire() {
    retired = true;
  }

  /** Retired, with no write in flight: nothing more can land in it from this process. */
  boolean drained() {
    return retired && inFlight.get() == 0;
  }
}
