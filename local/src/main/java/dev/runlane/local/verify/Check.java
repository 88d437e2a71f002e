package dev.runlane.local.verify;

import java.util.List;

/**
 * One verification check.
 *
 * @param name what is checked, e.g. "no acked event lost"
 * @param passed whether it held
 * @param detail the numbers behind it, and examples when it failed
 */
public record Check(String name, boolean passed, String detail) {
  /** How many failures a failed check names. */
  static final int EXAMPLES = 5;

  /** Passed with {@code okDetail} when nothing failed; else the count and the first examples. */
  static Check of(String name, List<String> failures, String okDetail) {
    if (failures.isEmpty()) {
      return new Check(name, true, okDetail);
    }
    return new Check(
        name,
        false,
        failures.size()
            + " failing, e.g. "
            + String.join(", ", failures.subList(0, Math.min(EXAMPLES, failures.size()))));
  }
}
