package dev.runlane.bench.load;

import java.util.concurrent.locks.LockSupport;

/**
 * The intended start times of an open-loop, constant-rate load: request {@code i} is due at {@code
 * start + i * 1e9 / rate} ns, whatever happened to the requests before it. Latency is measured from
 * this intended time, not from when the request actually left, so a stalled server is charged for
 * the requests it delayed (no coordinated omission).
 */
public final class RateSchedule {
  private final long startNanos;
  private final double periodNanos;

  public RateSchedule(long startNanos, double ratePerSecond) {
    if (!(ratePerSecond > 0)) {
      throw new IllegalArgumentException("rate must be positive: " + ratePerSecond);
    }
    this.startNanos = startNanos;
    this.periodNanos = 1e9 / ratePerSecond;
  }

  /** When request {@code index} (0-based) is due. */
  public long intendedStart(long index) {
    return startNanos + Math.round(index * periodNanos);
  }

  /** Parks the calling thread until request {@code index} is due (at once if it is late). */
  public void parkUntilDue(long index) {
    long wait = intendedStart(index) - System.nanoTime();
    if (wait > 0) {
      LockSupport.parkNanos(wait);
    }
  }

  /** How many requests are due at or before {@code nowNanos} (indexes 0 .. n-1). */
  public long dueBy(long nowNanos) {
    if (nowNanos < startNanos) {
      return 0;
    }
    long n = (long) Math.floor((nowNanos - startNanos) / periodNanos) + 1;
    // Guard against rounding at the boundary: keep intendedStart(n - 1) <= now < intendedStart(n).
    while (n > 0 && intendedStart(n - 1) > nowNanos) {
      n--;
    }
    while (intendedStart(n) <= nowNanos) {
      n++;
    }
    return n;
  }

  /** How many requests fall in the first {@code seconds} seconds. */
  public long countWithin(double seconds) {
    return (long) Math.floor(seconds * 1e9 / periodNanos);
  }
}
