package dev.runlane.bench;

import java.util.List;

/**
 * One stage of a run: what it is asked for by, and what it measures. {@link Stages} lists them in
 * the order a run takes them; the runner records each stage's command before it runs it, and
 * deletes the topics it created after.
 */
public interface Stage {
  /** What the command line names it by; its rows and notes carry it too. */
  String name();

  /** Whether it runs only when named: a run that names no stage leaves it out. */
  default boolean optIn() {
    return false;
  }

  /**
   * The environment variables that change what it measures. A run records those it was given, or
   * its figures cannot be reproduced from its results.
   */
  default List<String> variables() {
    return List.of();
  }

  /** Measures, adding its rows and notes to {@code ctx.results}. */
  void run(BenchContext ctx) throws Exception;
}
