package dev.runlane.processor.topology;

import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * Keeps the pending store's changelog to the events that stayed parked across a commit (D30).
 *
 * <p>A parked event is put into the record cache and almost always deleted from it again before the
 * next commit. Without a flush listener, Streams' caching layer still logs a tombstone for every
 * such key at the commit: one changelog record per event, which every restart then replays. With a
 * listener, it first asks the store below whether the key is there, and skips the delete when it is
 * not, as it does for every KTable. The listener itself does nothing.
 */
final class UnloggedDeletes {
  private UnloggedDeletes() {}

  /**
   * Registers the no-op listener on a cached store, as returned by {@code getStateStore}.
   *
   * @return false if the store has no caching layer to register with (then every delete is logged,
   *     as before; nothing is lost)
   */
  @SuppressWarnings("unchecked")
  static boolean skipFor(StateStore store) {
    // CachedStateStore is Streams-internal; KTableSource registers the same way. If a Kafka upgrade
    // changes the layering, this returns false and ProcessorIT's changelog count fails.
    return store instanceof CachedStateStore<?, ?> cached
        && ((CachedStateStore<Object, Object>) cached).setFlushListener(record -> {}, false);
  }
}
