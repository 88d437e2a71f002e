package dev.runlane.processor.dedup;

/**
 * The decision table (design.md §6.2), as one pure function.
 *
 * <p>A {@code done} marker written by this task is not trusted for a newer event: it is written
 * before Kafka commits the transaction, so after a crash there the run store has rolled back while
 * Redis still says done. The run store is the durable guard; Redis only saves work. Where Redis
 * cannot tell, or its marker may be of an aborted attempt, the task's record of decided ids tells a
 * copy of a decided event from one never decided (D68).
 */
public final class DedupDecision {
  private DedupDecision() {}

  /**
   * Whether the decision on {@code claim} and {@code order} reads the record of decided ids: always
   * where Redis was not asked or could not answer (the record alone then sees a reused id), and for
   * an event not newer than its run's head where the claim leaves open whether it was applied.
   * Other decisions take {@link Recorded#UNKNOWN} and spare the read: a read for every first
   * delivery (a {@code NEW} newer event) cost a quarter of the processor's rate (D68).
   */
  public static boolean readsRecord(Claim claim, Order order) {
    return switch (claim) {
      case UNAVAILABLE, REPLAY, UNKNOWN_MARKER -> true;
      case NEW, PROCESSING_BY_THIS_TASK, STALE_BY_THIS_TASK, DONE_BY_THIS_TASK ->
          order != Order.NEWER;
      case DONE_BY_OTHER, EARLIER_IN_BATCH, PROCESSING_BY_OTHER, OTHER_RUN -> false;
    };
  }

  public static Outcome decide(Claim claim, Order order, Recorded recorded) {
    return switch (claim) {
      case NEW, PROCESSING_BY_THIS_TASK, STALE_BY_THIS_TASK, UNAVAILABLE, REPLAY, UNKNOWN_MARKER ->
          byStore(order, recorded);
      case DONE_BY_OTHER, EARLIER_IN_BATCH -> Outcome.DUPLICATE_REDIS;
      case DONE_BY_THIS_TASK -> byOwnMarker(order, recorded);
      case PROCESSING_BY_OTHER -> Outcome.WAIT;
      case OTHER_RUN -> Outcome.REUSED;
    };
  }

  /**
   * The run store decides: its head orders the event, and its record says whether an event not
   * newer than the head is a copy of one it applied (a duplicate) or one it never applied (stale),
   * and whether the id was decided for another run (D68).
   */
  private static Outcome byStore(Order order, Recorded recorded) {
    return switch (recorded) {
      case APPLIED -> Outcome.DUPLICATE_STORE;
      case OTHER_RUN -> Outcome.REUSED_STORE;
      case STALE, NONE, UNKNOWN ->
          switch (order) {
            case NEWER -> Outcome.APPLY;
            case SAME -> Outcome.DUPLICATE_STORE;
            case OLDER -> Outcome.STALE;
          };
    };
  }

  /**
   * This task's own done marker: a newer event was not applied (the attempt aborted); the run's
   * head itself is a duplicate. An older one is a duplicate, unless the record, which covers the
   * horizon and keeps an id as long as the marker (each copy marked again is recorded again), never
   * saw it decided: then the marker is of an aborted attempt, a newer event has been applied since,
   * and the event is stale, listed as such rather than dropped as a copy of itself (D68).
   */
  private static Outcome byOwnMarker(Order order, Recorded recorded) {
    return switch (order) {
      case NEWER -> Outcome.APPLY;
      case SAME -> Outcome.DUPLICATE_REDIS; // the run's head itself: applied, whatever the record
      case OLDER -> recorded == Recorded.NONE ? Outcome.STALE : Outcome.DUPLICATE_REDIS;
    };
  }
}
