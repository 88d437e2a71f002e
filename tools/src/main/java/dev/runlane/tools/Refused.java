package dev.runlane.tools;

/** A precondition does not hold: the command changes nothing and says why (exit 3). */
public final class Refused extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public Refused(String reason) {
    super(reason);
  }
}
