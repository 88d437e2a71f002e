package dev.runlane.processor;

import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.topology.PoisonEventException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a dead stream thread means: replaced while it can recover on its own, the processor stopped
 * (liveness DOWN, then exit) when it cannot (D36). One per processor, across its generations.
 */
final class ThreadDeathPolicy {
  // Logged under ProcessorApp's name, as before this policy had a class: log filters still match.
  private static final Logger log = LoggerFactory.getLogger(ProcessorApp.class);

  /**
   * Stream threads that die this often are not recovering: stop and fail liveness rather than
   * replace them for ever behind a live 200 (D36).
   */
  static final int MAX_THREAD_REPLACEMENTS = 5;

  static final Duration REPLACEMENT_WINDOW = Duration.ofMinutes(5);

  private final Deque<Long> replacements = new ArrayDeque<>(); // guarded by itself
  private final Consumer<String> stop;

  /**
   * @param stop stops the processor for good, with the reason
   */
  ThreadDeathPolicy(Consumer<String> stop) {
    this.stop = stop;
  }

  /** Streams' uncaught exception handler: replace the thread, or stop the client for good. */
  StreamThreadExceptionResponse onStreamThreadDied(Throwable e) {
    if (invalidPartitions(e)) {
      stop.accept(
          "the input's partitions changed under the running processor ("
              + rootMessage(e)
              + "): partitions were added outside `runlane partitions grow`. Run `runlane"
              + " partitions grow --to <the input's partition count>` to move to a new generation"
              + " that takes over (docs/operations.md, 'Partitions added by hand').");
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    }
    if (causedBy(e, PoisonEventException.class)) {
      // One event's decision threw: it is tried again a bounded number of times, then
      // dead-lettered (D43), so these deaths end by themselves.
      log.warn("stream thread failed deciding one event; replacing it: {}", rootMessage(e));
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    if (causedBy(e, DedupUnavailableException.class)) {
      // Block mode fails the thread on purpose while Redis is away, to retry from the last
      // commit: not a thread that cannot recover, so not counted.
      log.warn(
          "stream thread gave up waiting for Redis (block mode); replacing it: {}", e.toString());
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    long now = System.nanoTime();
    synchronized (replacements) {
      replacements.addLast(now);
      while (now - replacements.peekFirst() > REPLACEMENT_WINDOW.toNanos()) {
        replacements.removeFirst();
      }
      if (replacements.size() > MAX_THREAD_REPLACEMENTS) {
        stop.accept(
            "stream threads died "
                + replacements.size()
                + " times within "
                + REPLACEMENT_WINDOW.toMinutes()
                + " minutes; the last: "
                + e);
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      }
    }
    log.error("stream thread died; replacing it (its tasks restart from the last commit)", e);
    return StreamThreadExceptionResponse.REPLACE_THREAD;
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  /** Streams' own words when a changelog no longer matches its grown input. */
  private static boolean invalidPartitions(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains("has invalid partitions")) {
        return true;
      }
    }
    return false;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage();
  }
}
