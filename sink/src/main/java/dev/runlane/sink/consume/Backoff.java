package dev.runlane.sink.consume;

import java.time.Duration;

/** Doubling waits between attempts, from {@code first} up to {@code max}; reset on success. */
final class Backoff {
  private final Duration first;
  private final Duration max;
  private Duration next;

  Backoff(Duration first, Duration max) {
    this.first = first;
    this.max = max;
    this.next = first;
  }

  /** The wait before the next attempt; each call doubles the one after, up to the maximum. */
  Duration next() {
    Duration wait = next;
    Duration doubled = next.multipliedBy(2);
    next = doubled.compareTo(max) > 0 ? max : doubled;
    return wait;
  }

  void reset() {
    next = first;
  }
}
