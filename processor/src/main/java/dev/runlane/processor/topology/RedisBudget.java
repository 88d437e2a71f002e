package dev.runlane.processor.topology;

import java.time.Duration;

/**
 * How long each stream thread may spend on Redis within one transaction. Every Redis call a task
 * makes happens inside its thread's open transaction, which the broker aborts after {@code
 * transaction.timeout.ms}; a Redis that answers slowly but answers would otherwise let one
 * transaction hold many slow round trips, abort, be retried, and abort again (D42).
 *
 * <p>The thread's clock restarts when its transaction ends ({@link #transactionEnded()}, called
 * from the stream thread's producer). Without transactions (at-least-once) there is nothing to
 * bound: {@link #unbounded()}.
 */
public final class RedisBudget {
  /**
   * What a transaction may spend on Redis: with one call of up to REDIS_TIMEOUT_MS started at its
   * end, it stays well under the 10 s transaction timeout.
   */
  public static final Duration PER_TRANSACTION = Duration.ofSeconds(3);

  private final long budgetNanos;
  private final ThreadLocal<long[]> spent = ThreadLocal.withInitial(() -> new long[1]);

  private RedisBudget(long budgetNanos) {
    this.budgetNanos = budgetNanos;
  }

  public static RedisBudget perTransaction(Duration budget) {
    return new RedisBudget(budget.toNanos());
  }

  public static RedisBudget unbounded() {
    return new RedisBudget(Long.MAX_VALUE);
  }

  /** Whether the calling thread's transaction may still start a Redis call. */
  boolean allows() {
    return spent.get()[0] < budgetNanos;
  }

  /** Adds {@code nanos} of Redis time (or of waiting for Redis) to the calling thread's. */
  void spend(long nanos) {
    spent.get()[0] += nanos;
  }

  /** The calling thread's transaction committed or aborted: its next one starts afresh. */
  public void transactionEnded() {
    spent.get()[0] = 0;
  }
}
