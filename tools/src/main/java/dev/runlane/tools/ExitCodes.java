package dev.runlane.tools;

/** What the tools exit with; listed in every command's {@code --help}. */
public final class ExitCodes {
  /** Done (or, with {@code --dry-run}, the plan printed). */
  public static final int OK = 0;

  /** An unexpected failure, e.g. Kafka unreachable; the state is as the last step printed. */
  public static final int ERROR = 1;

  /** A bad command line or setting. */
  public static final int USAGE = 2;

  /** Refused: doing it would break a guarantee; nothing was changed, the message says why. */
  public static final int REFUSED = 3;

  /**
   * A wait ran out of time. Before the new generation is active, re-run the same command to resume;
   * after, it goes on by itself (the message says which).
   */
  public static final int TIMED_OUT = 4;

  /** {@code audit}: records the ledger does not account for; the output names the first (D88). */
  public static final int UNACCOUNTED = 5;

  /** The text for {@code --help}. */
  public static final String HELP =
      "%nExit codes:%n"
          + "  0  done (with --dry-run: the plan printed)%n"
          + "  1  unexpected failure (e.g. Kafka unreachable)%n"
          + "  2  bad command line or setting%n"
          + "  3  refused: it would break a guarantee; nothing changed%n"
          + "  4  a wait timed out; the message says whether to re-run the command (to resume)%n"
          + "     or only to wait (the new generation is active and goes on by itself)%n"
          + "  5  audit: records unaccounted for (the output names the first)%n";

  private ExitCodes() {}
}
