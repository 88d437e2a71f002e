package dev.runlane.processor.dedup;

import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * The shared dedup layer: claim request ids before deciding, mark them done after, release them on
 * failure. Each call is one round trip, for whole batches.
 *
 * <p>Redis is an optimisation over the idempotent run-store write, never the only defence: every
 * method may throw {@link DedupUnavailableException}, and callers then decide on the run store.
 */
public interface Dedup extends AutoCloseable {

  /**
   * In one round trip: writes every request's markers (so that a copy of a decided id reads done,
   * not the claim it held), then claims each request's events for its owner and reports what was
   * there, one map by request id per request, in their order. If it throws, none of it is known to
   * have happened; if only some of the nodes the keys live on answered, the others' keys are {@link
   * Claim#UNAVAILABLE} and their markers {@link ClaimAnswer#unwritten()} (D82).
   */
  ClaimAnswer claim(List<ClaimRequest> requests);

  /**
   * Marks each event done by {@code owner}, for the done TTL.
   *
   * @return the request ids of the markers not written, their node not answering (D82)
   */
  Set<String> markDone(String owner, Collection<Marker> markers);

  /** Deletes each event's claim if, and only if, it is still {@code owner}'s processing claim. */
  void release(String owner, Collection<EventKey> events);

  /**
   * Reads, without writing anything, which of {@code events} have an id whose marker names another
   * run: for events decided on the run store alone (a replay's ranges), so that a reused id is
   * dead-lettered as the live decision did (D70). A layer that knows nothing says none.
   */
  default Set<String> takenForOtherRuns(Collection<EventKey> events) {
    return Set.of();
  }

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
      public ClaimAnswer claim(List<ClaimRequest> requests) {
        throw new DedupUnavailableException("dedup is disabled", null);
      }

      @Override
      public Set<String> markDone(String owner, Collection<Marker> markers) {
        return Set.of();
      }

      @Override
      public void release(String owner, Collection<EventKey> events) {}

      @Override
      public boolean enabled() {
        return false;
      }

      @Override
      public void close() {}
    };
  }
}
