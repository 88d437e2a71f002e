package dev.runlane.tools;

/** A wait ran out of time (exit 4); the message says what was awaited and how to resume. */
public final class TimedOut extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TimedOut(String message) {
    super(message);
  }
}
