package dev.runlane.processor.generation;

/**
 * The input topic no longer fits the state built from it (partitions added by hand): running on
 * would split runs from their state and break per-run order, and Streams would only fail again on
 * every rebalance. The processor stops instead; the message says what happened and what to run.
 */
public final class InputChangedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean inputMissing;

  public InputChangedException(String message) {
    this(message, false);
  }

  public InputChangedException(String message, boolean inputMissing) {
    super(message);
    this.inputMissing = inputMissing;
  }

  /** The input topic was not found: possibly a metadata answer that lags a creation. */
  public boolean inputMissing() {
    return inputMissing;
  }
}
