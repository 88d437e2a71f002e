package dev.runlane.tools;

/** An argument a command cannot use (exit 2); the message says what was expected. */
public final class BadUsage extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public BadUsage(String message) {
    super(message);
  }
}
