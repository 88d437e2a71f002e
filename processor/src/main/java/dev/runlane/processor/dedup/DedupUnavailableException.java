package dev.runlane.processor.dedup;

/** Redis could not answer; the caller decides on the run store alone (degraded). */
public final class DedupUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DedupUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
