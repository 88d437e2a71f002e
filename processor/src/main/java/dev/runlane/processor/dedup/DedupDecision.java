package dev.runlane.processor.dedup;

/**
 * The decision table (design.md §6.2), as one pure function.
 *
 * <p>A {@code done} marker written by this task is not trusted for a newer event: it is written
 * before Kafka commits the transaction, so after a crash there the run store has rolled back while
 * Redis still says done. The run store is the durable guard; Redis only saves work.
 */
public final class DedupDecision {
  private DedupDecision() {}

  public static Outcome decide(Claim claim, Order order) {
    return switch (claim) {
      case NEW, PROCESSING_BY_THIS_TASK, STALE_BY_THIS_TASK, UNAVAILABLE, REPLAY, UNKNOWN_MARKER ->
          byStore(order);
      case DONE_BY_OTHER, EARLIER_IN_BATCH -> Outcome.DUPLICATE_REDIS;
      case DONE_BY_THIS_TASK -> order == Order.NEWER ? Outcome.APPLY : Outcome.DUPLICATE_REDIS;
      case PROCESSING_BY_OTHER -> Outcome.WAIT;
      case OTHER_RUN -> Outcome.REUSED;
    };
  }

  private static Outcome byStore(Order order) {
    return switch (order) {
      case NEWER -> Outcome.APPLY;
      case SAME -> Outcome.DUPLICATE_STORE;
      case OLDER -> Outcome.STALE;
    };
  }
}
