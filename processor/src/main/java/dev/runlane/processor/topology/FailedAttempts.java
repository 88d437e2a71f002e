package dev.runlane.processor.topology;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Events whose decision threw, by task and offset, kept across the stream-thread replacements their
 * failures cause. A failed attempt fails its thread, so that its transaction aborts with everything
 * the attempt changed; after {@link #MAX_ATTEMPTS} the event is dead-lettered instead of failing
 * its partition for ever (D43).
 *
 * <p>One instance per built topology. Counts live in this JVM only: a restarted process gives an
 * event its attempts again, still a bounded number.
 */
final class FailedAttempts {
  static final int MAX_ATTEMPTS = 3;

  private final Map<String, Failure> failures = new ConcurrentHashMap<>();

  /** How many attempts failed so far, and the last failure. */
  record Failure(int attempts, String lastError) {}

  /** Records a failed attempt and returns the exception that fails the thread. */
  PoisonEventException failed(String owner, long offset, String requestId, RuntimeException e) {
    Failure failure =
        failures.merge(
            key(owner, offset),
            new Failure(1, describe(e)),
            (was, now) -> new Failure(was.attempts() + 1, now.lastError()));
    return new PoisonEventException(owner, offset, requestId, failure.attempts(), e);
  }

  /** The failure of an event that has used up its attempts, or null. */
  Failure exhausted(String owner, long offset) {
    if (failures.isEmpty()) {
      return null;
    }
    Failure failure = failures.get(key(owner, offset));
    return failure != null && failure.attempts() >= MAX_ATTEMPTS ? failure : null;
  }

  /** The event was decided or dead-lettered: it needs no count any more. */
  void settled(String owner, long offset) {
    if (!failures.isEmpty()) {
      failures.remove(key(owner, offset));
    }
  }

  private static String key(String owner, long offset) {
    return owner + "@" + offset;
  }

  private static String describe(RuntimeException e) {
    return e.getMessage() == null
        ? e.getClass().getName()
        : e.getClass().getName() + ": " + e.getMessage();
  }
}
