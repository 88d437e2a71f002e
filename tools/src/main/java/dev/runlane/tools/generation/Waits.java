package dev.runlane.tools.generation;

import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a condition with a deadline, printing progress now and then. */
final class Waits {
  private static final Duration POLL = Duration.ofMillis(500);
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

  private Waits() {}

  /**
   * Polls {@code condition} until it holds.
   *
   * @throws TimedOut with {@code onTimeout}'s text if it still does not hold after {@code timeout}
   */
  static void until(
      Steps steps,
      Duration timeout,
      BooleanSupplier condition,
      Supplier<String> progress,
      Supplier<String> onTimeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long nextProgress = System.nanoTime() + PROGRESS_EVERY.toNanos();
    while (!condition.getAsBoolean()) {
      long now = System.nanoTime();
      if (now - deadline > 0) {
        throw new TimedOut(onTimeout.get());
      }
      if (now - nextProgress > 0) {
        steps.detail(progress.get());
        nextProgress = now + PROGRESS_EVERY.toNanos();
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }
}
