package dev.runlane.processor.dedup;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The shared dedup layer: claim request ids before deciding, mark them done after, release them on
 * failure. Each call is one round trip for a whole batch.
 *
 * <p>Redis is an optimisation over the idempotent run-store write, never the only defence: every
 * method may throw {@link DedupUnavailableException}, and callers then decide on the run store.
 */
public interface Dedup extends AutoCloseable {

  /**
   * In one round trip: marks every request's {@code doneFirst} done by its owner, then claims every
   * request's ids for its owner, and reports what was there, one map per request in their order. If
   * it throws, none of it is known to have happened.
   */
  List<Map<String, Claim>> claim(List<ClaimRequest> requests);

  /**
   * Marks each id done by {@code owner}, for the done TTL; those in {@code stale} as decided stale
   * (D40).
   */
  void markDone(Collection<String> requestIds, Set<String> stale, String owner);

  /** Deletes each id's claim if, and only if, it is still {@code owner}'s processing claim. */
  void release(Collection<String> requestIds, String owner);

  /**
   * Checks at start what can never fix itself (refused credentials); a layer that is only away
   * passes.
   *
   * @throws IllegalStateException naming the settings to check
   */
  default void verifyAccess() {}

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
      public List<Map<String, Claim>> claim(List<ClaimRequest> requests) {
        throw new DedupUnavailableException("dedup is disabled", null);
      }

      @Override
      public void markDone(Collection<String> requestIds, Set<String> stale, String owner) {}

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
