package dev.runlane.tools;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;

/** One line per step of a procedure, what it waits for, and how long it took. */
public final class Steps {
  private final PrintStream out;
  private int number;
  private long stepStart = System.nanoTime();
  private final long start = System.nanoTime();

  public Steps(PrintStream out) {
    this.out = out;
  }

  /** Starts the next step. */
  public void step(String what) {
    stepStart = System.nanoTime();
    out.printf(Locale.ROOT, "[%d] %s%n", ++number, what);
    out.flush();
  }

  /** A detail of the current step. */
  public void detail(String what) {
    out.printf(Locale.ROOT, "    %s%n", what);
    out.flush();
  }

  /** Ends the current step with what it found or did. */
  public void done(String result) {
    out.printf(Locale.ROOT, "    done in %s: %s%n", format(sinceStep()), result);
    out.flush();
  }

  /** Where a human or a deployment system must act. */
  public void action(String what) {
    out.printf(Locale.ROOT, "    ACTION: %s%n", what);
    out.flush();
  }

  public Duration sinceStep() {
    return Duration.ofNanos(System.nanoTime() - stepStart);
  }

  public Duration sinceStart() {
    return Duration.ofNanos(System.nanoTime() - start);
  }

  public void summary(String what) {
    out.printf(Locale.ROOT, "%s (%s in all)%n", what, format(sinceStart()));
    out.flush();
  }

  public static String format(Duration d) {
    return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }
}
