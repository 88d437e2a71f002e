package dev.runlane.processor.runs;

/**
 * Whether a replay is re-deriving runs, so that the run store may hold states older than the ones
 * the generation before it answered: {@code /runs/{id}} then answers 503 "re-deriving" (D69).
 */
@FunctionalInterface
public interface Rederiving {
  /** No replay: the run store is the newest committed state. */
  Rederiving NEVER = partition -> false;

  /**
   * @param partition the run's input partition, or {@link #ANY} when it is not known yet (Streams
   *     stopped or rebalancing)
   * @return whether runs of that partition (of some partition, for {@link #ANY}) are re-deriving
   */
  boolean on(int partition);

  /** The run's partition is not known. */
  int ANY = -1;
}
