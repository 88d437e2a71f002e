package dev.runlane.processor.dedup;

import java.util.Collection;
import java.util.Map;

/**
 * The shared dedup layer: claim request ids before deciding, mark them done after, release them on
 * failure. Each call is one round trip for a whole batch of one task.
 *
 * <p>Redis is an optimisation over the idempotent run-store write, never the only defence: every
 * method may throw {@link DedupUnavailableException}, and callers then decide on the run store.
 */
public interface Dedup extends AutoCloseable {

  /**
   * In one round trip: writes {@code doneFirst} (so that a copy of a decided id reads done, not the
   * claim it held), then claims each event's id for {@code owner} and reports what was there, by
   * request id. The events' ids are distinct. If it throws, none of it is known to have happened.
   */
  Map<String, Claim> claim(String owner, Collection<Marker> doneFirst, Collection<EventKey> events);

  /** Marks each event done by {@code owner}, for the done TTL. */
  void markDone(String owner, Collection<Marker> markers);

  /** Deletes each event's claim if, and only if, it is still {@code owner}'s processing claim. */
  void release(String owner, Collection<EventKey> events);

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
      public Map<String, Claim> claim(
          String owner, Collection<Marker> doneFirst, Collection<EventKey> events) {
        throw new DedupUnavailableException("dedup is disabled", null);
      }

      @Override
      public void markDone(String owner, Collection<Marker> markers) {}

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
