package dev.runlane.common.config;

import java.util.List;

/** Invalid configuration: carries every problem found, in the order found. */
public final class ConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final List<String> problems;

  /**
   * @param problems one message per problem, each naming the variable; never a secret value
   */
  public ConfigException(List<String> problems) {
    super("invalid configuration: " + String.join("; ", problems));
    this.problems = List.copyOf(problems);
  }

  /** Every problem, in the order found. */
  public List<String> problems() {
    return problems;
  }
}
