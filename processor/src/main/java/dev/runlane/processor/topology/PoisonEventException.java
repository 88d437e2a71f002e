package dev.runlane.processor.topology;

/**
 * Deciding one event threw: its stream thread fails, so that the transaction aborts and the event
 * is tried again from the last commit, until it has failed {@link FailedAttempts#MAX_ATTEMPTS}
 * times and is dead-lettered (D43). The thread deaths it causes are bounded by those attempts, so
 * they do not count as a thread that cannot recover (D36).
 */
public final class PoisonEventException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  PoisonEventException(String owner, long offset, String requestId, int attempt, Throwable cause) {
    super(
        "deciding request_id="
            + requestId
            + " at offset "
            + offset
            + " of task "
            + owner
            + " failed (attempt "
            + attempt
            + " of "
            + FailedAttempts.MAX_ATTEMPTS
            + ")",
        cause);
  }
}
