package dev.runlane.bench;

import java.util.List;

/**
 * One stage of a run: what it is asked for by, and what it measures. {@link Stages} lists them in
 * the order a run takes them; the runner records each stage's command before it runs it, and
 * deletes the topics it created after.
 */
public abstract class Stage {
  private final String name;
  private final boolean optIn;
  private final List<String> variables;

  /** A stage that no environment variable changes. */
  protected Stage(String name) {
    this(name, List.of());
  }

  /**
   * @param name what the command line names it by; its rows and notes carry it too
   * @param variables the environment variables that change what it measures: a run records those it
   *     was given, or its figures cannot be reproduced from its results
   */
  protected Stage(String name, List<String> variables) {
    this(name, false, variables);
  }

  /**
   * @param optIn whether it runs only when named: a run that names no stage leaves it out
   */
  protected Stage(String name, boolean optIn, List<String> variables) {
    this.name = name;
    this.optIn = optIn;
    this.variables = List.copyOf(variables);
  }

  public final String name() {
    return name;
  }

  public final boolean optIn() {
    return optIn;
  }

  public final List<String> variables() {
    return variables;
  }

  /** Measures, adding its rows and notes to {@code ctx.results}. */
  public abstract void run(BenchContext ctx) throws Exception;
}
