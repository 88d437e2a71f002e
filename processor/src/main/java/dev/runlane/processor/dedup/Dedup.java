package dev.runlane.processor.dedup;

import java.util.Collection;
import java.util.Map;

/**
 * The shared dedup layer: claim request ids before deciding, mark them done after, release them on
 * failure. Each call is one round trip for a whole batch.
 *
 * <p>Redis is an optimisation over the idempotent run-store write, never the only defence: every
 * method may throw {@link DedupUnavailableException}, and callers then decide on the run store.
 */
public interface Dedup extends AutoCloseable {

  /**
   * Marks {@code doneFirst} done by {@code owner}, then claims each of {@code requestIds} for it
   * and reports what was there, in one round trip. If it throws, neither is known to have happened.
   */
  Map<String, Claim> claim(
      Collection<String> requestIds, Collection<String> doneFirst, String owner);

  /** Marks each id done by {@code owner}, for the done TTL. */
  void markDone(Collection<String> requestIds, String owner);

  /** Deletes each id's claim if, and only if, it is still {@code owner}'s processing claim. */
  void release(Collection<String> requestIds, String owner);

  /** False when dedup is switched off (benchmarks of the bare topology). */
  default boolean enabled() {
    return true;
  }

  @Override
  void close();

  /** A dedup layer that knows nothing: every decision falls to the run store. */
  static Dedup disabled() {
    return new Dedup() {
      @Override
      public Map<String, Claim> claim(
          Collection<String> requestIds, Collection<String> doneFirst, String owner) {
        throw new DedupUnavailableException("dedup is disabled", null);
      }

      @Override
      public void markDone(Collection<String> requestIds, String owner) {}

      @Override
      public void release(Collection<String> requestIds, String owner) {}

      @Override
      public boolean enabled() {
        return false;
      }

      @Override
      public void close() {}
    };
  }
}
