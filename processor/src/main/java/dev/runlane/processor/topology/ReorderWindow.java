package dev.runlane.processor.topology;

import dev.runlane.processor.dedup.Outcome;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * The reorder window of one task (design.md §6.6, D46): holds each event the decision table would
 * apply, and releases held events by the records' own timestamps, so that a replay decides the
 * same: as each record is read, before each parked event is decided, with the idle clock after a
 * drain with nothing parked, and early past the cap on held events. A released event is applied to
 * its run.
 *
 * <p>Made anew in every {@code init()}, with the held events rebuilt from their store.
 */
final class ReorderWindow {
  /**
   * The most one gap between drains adds to a task's idle time. Wall-clock punctuations come once
   * per stream-thread loop, and an idle thread's poll waits up to {@code poll.ms} (100 ms) for
   * records, so drains of an idle task are up to ~100 ms apart; anything longer is the thread busy.
   */
  static final long MAX_IDLE_STEP_MS = 250;

  private final ReorderBuffer held;
  private final ParkedEvents parked;
  private final Runs runs;
  private final ReplayRanges ranges;
  private final ProcessorMetrics metrics;
  private final long windowMs;
  private final int maxHeld;
  private final LongSupplier wallClock;

  /** The task's stream time at the last drain (D46). */
  private long streamTimeMs = Long.MIN_VALUE;

  /**
   * How long this task has been idle since its stream time last moved: the sum of the gaps between
   * its drains, each counted up to {@link #MAX_IDLE_STEP_MS}. A longer gap is the stream thread
   * busy elsewhere (initializing another task, reading its held events back), not this partition
   * being idle (D49).
   */
  private long idleMs;

  /**
   * When this task last drained, or -1 before its first drain. The idle clock starts at the first
   * drain, not at {@code init()}: the stream thread initializes its other tasks after this one
   * (reading their held events back takes a moment each), and that time is no idleness.
   */
  private long lastDrainAtMs = -1;

  /**
   * The offset of the last input record the task's last commit did not cover, until the task has
   * read it again; -1 once it has, or if there was none. The idle clock does not run before: the
   * events decided from those records before a crash left done markers in Redis, and a held event
   * released by the clock before an older one of its run is read again would make that one read as
   * a duplicate of its own aborted decision (D67).
   */
  private long awaitedOffset = -1;

  /** The lookup of {@link #awaitedOffset} while it has not been taken in, or null. */
  private CompletableFuture<OptionalLong> tail;

  /** The highest input offset the task has read since it started, or -1. */
  private long highestRead = -1;

  /** How long a look at the input saying the task is not behind lets the idle clock release. */
  static final long NOT_BEHIND_FOR_MS = 1000;

  /** Asks whether the task is behind its input, given its highest read offset (D72). */
  private LongFunction<CompletableFuture<Boolean>> behind =
      read -> CompletableFuture.completedFuture(false);

  /** The look at the input in flight, or null; and when it was asked. */
  private CompletableFuture<Boolean> behindCheck;

  private long behindCheckAtMs;

  /** When the last look found the task not behind, or -1. */
  private long notBehindAtMs = -1;

  ReorderWindow(
      ReorderBuffer held,
      ParkedEvents parked,
      Runs runs,
      ReplayRanges ranges,
      ProcessorMetrics metrics,
      TopologySettings settings,
      LongSupplier wallClock) {
    this.held = held;
    this.parked = parked;
    this.runs = runs;
    this.ranges = ranges;
    this.metrics = metrics;
    this.windowMs = settings.reorderWindow().toMillis();
    this.maxHeld = settings.maxHeld();
    this.wallClock = wallClock;
  }

  /**
   * The task starts: {@code tail} will tell the offset of the last input record its last commit did
   * not cover, if any. Until it has, and until the task has read that record again, the idle clock
   * and the cap wait (D67). Looked up off the stream thread, which must not wait on brokers while
   * its transaction is open.
   */
  void awaitRead(
      CompletableFuture<OptionalLong> tail, LongFunction<CompletableFuture<Boolean>> behind) {
    this.tail = tail;
    this.behind = behind;
  }

  /**
   * Whether a look at the input at most {@link #NOT_BEHIND_FOR_MS} old found the task not behind
   * it; if none did, asks again (off the stream thread) and answers false meanwhile. An idle clock
   * runs on the wall clock while the task reads nothing; a task that reads nothing because it lags
   * (its thread busy, its fetches late) is not idle, and releasing by that clock would apply an
   * event before an older one of its run that is still unread within the window (D72).
   */
  private boolean notBehind() {
    long now = wallClock.getAsLong();
    if (behindCheck != null && behindCheck.isDone()) {
      if (!behindCheck.isCompletedExceptionally() && !behindCheck.join()) {
        notBehindAtMs = behindCheckAtMs;
      }
      behindCheck = null;
    }
    if (notBehindAtMs >= 0 && now - notBehindAtMs <= NOT_BEHIND_FOR_MS) {
      return true;
    }
    if (behindCheck == null) {
      behindCheck = behind.apply(highestRead);
      behindCheckAtMs = now;
      return notBehind(behindCheck);
    }
    return false;
  }

  /** A look answered at once (no broker) counts at once. */
  private boolean notBehind(CompletableFuture<Boolean> check) {
    if (check.isDone() && !check.isCompletedExceptionally() && !check.join()) {
      notBehindAtMs = behindCheckAtMs;
      behindCheck = null;
      return true;
    }
    return false;
  }

  /** The task read the input record at {@code offset}, whatever becomes of it. */
  void read(long offset) {
    highestRead = Math.max(highestRead, offset);
    if (awaitedOffset >= 0 && offset >= awaitedOffset) {
      awaitedOffset = -1;
    }
  }

  /**
   * Whether the task still waits for its uncommitted tail: the lookup has not answered, or the task
   * has not read its last record again.
   *
   * @throws IllegalStateException if the lookup failed: the stream thread fails and its tasks start
   *     again, as when reading held events back fails
   */
  private boolean awaitingTail() {
    if (tail != null) {
      if (!tail.isDone()) {
        return true;
      }
      OptionalLong last;
      try {
        last = tail.join();
      } catch (CompletionException e) {
        throw new IllegalStateException(
            "could not find where the last commit left the input", e.getCause());
      }
      tail = null;
      if (last.isPresent() && highestRead < last.getAsLong()) {
        awaitedOffset = last.getAsLong();
      }
    }
    return awaitedOffset >= 0;
  }

  /**
   * As a record that arrived at {@code arrivalMs} is read: releases what its decision would release
   * first, up to the first held event whose run has an event parked (D60).
   */
  void releaseAsRead(long arrivalMs) {
    releaseDue(arrivalMs, true);
  }

  /**
   * Before a parked event that arrived at {@code arrivalMs} is decided: what was due then goes
   * first, as it would have gone had the task decided at that instant.
   */
  void releaseBeforeDecision(long arrivalMs) {
    releaseDue(arrivalMs, false);
  }

  /**
   * Before a replaying generation decides an event of {@code runId} that no earlier generation
   * decided (it never read it, or stopped with it parked undecided): the run's held events that an
   * earlier generation emitted (re-derived silently, or emitted again marked) are applied first,
   * with the run's older held events. That generation applied and emitted them before it stopped,
   * so before this event could be decided, at a moment the records do not tell: its idle clock may
   * have released them at wall time, before an older event of the run that arrived within the
   * window was read. Decided while they are held, that older event would be emitted after the newer
   * one. An event it held when it stopped is not such an event: it was decided then, against the
   * head of that moment, which the records' times give again (D90).
   */
  void releaseEmittedBefore(String runId) {
    if (!held.holdsBelow(ranges.emittedBelow())) {
      return; // nothing held that an earlier generation emitted: no scan per decision
    }
    List<ReorderBuffer.Held> emitted =
        held.releaseRunThrough(runId, h -> ranges.emittedBefore(h.offset(), h.event().headers()));
    if (!emitted.isEmpty()) {
      applyReleased(emitted, false);
    }
  }

  /**
   * With a reorder window, an event to apply is held instead, unless this very event is held
   * already (a duplicate, caught by the store); one older than its run's state came too late for
   * the window and is stale, as without one (D46).
   */
  Outcome hold(long offset, PendingEvent event, Outcome outcome) {
    if (outcome == Outcome.STALE) {
      metrics.late();
      return outcome;
    }
    if (outcome != Outcome.APPLY) {
      return outcome;
    }
    if (held.holds(event)) {
      return Outcome.DUPLICATE_STORE;
    }
    held.hold(offset, event);
    return Outcome.HELD;
  }

  /**
   * After a drain: moves the idle clock, once the task has read again what its last commit did not
   * cover, and releases by it when nothing was parked; and releases the earliest-arrived events
   * early while more than the cap are held.
   *
   * @param streamTimeMs the task's stream time
   * @param nothingParked whether the drain found no parked event
   */
  void drained(long streamTimeMs, boolean nothingParked) {
    boolean awaiting = awaitingTail();
    if (awaiting) {
      lastDrainAtMs = -1; // the clock starts at the first drain after the tail is read (D67)
    } else if (moveIdleClock(streamTimeMs) && nothingParked && held.size() > 0 && notBehind()) {
      // Nothing arrives to move this task's time on: let it move with the wall clock from where
      // its records left it, so that an idle partition does not hold its events for ever. Not
      // from the wall clock itself: releasing every restored event at once would make stale
      // those of the task's next records that are older (D46).
      long base = this.streamTimeMs >= 0 ? this.streamTimeMs : held.earliestArrival();
      releaseDue(base + idleMs, false);
    }
    // Nor the cap before the tail is read: where drains fall decides a cap release, and a restart
    // moves them; released early, a held event could overtake an older one of its run still in
    // the tail (D67). The tail bounds how many pile up meanwhile.
    while (!awaiting && held.size() > maxHeld) {
      applyReleased(held.releaseEarliest(), true);
    }
  }

  /**
   * Moves the idle clock to this drain.
   *
   * @return whether it has run since the task's stream time last moved
   */
  private boolean moveIdleClock(long streamTimeMs) {
    long now = wallClock.getAsLong();
    boolean idle = lastDrainAtMs >= 0 && streamTimeMs <= this.streamTimeMs;
    if (idle) {
      idleMs += Math.min(now - lastDrainAtMs, MAX_IDLE_STEP_MS);
    } else {
      this.streamTimeMs = streamTimeMs;
      idleMs = 0;
    }
    lastDrainAtMs = now;
    return idle;
  }

  /**
   * Releases every held event that arrived at least a window before {@code nowMs}, earliest first.
   *
   * <p>{@code aheadOfParked}: called as a record is read, before the events parked ahead of it are
   * decided. Releasing a run's events changes its head, which a parked event of that run would then
   * be decided against, so the release stops at the first held event whose run has one parked; the
   * rest go when that record is decided, as they always did. Other runs' releases commute with the
   * parked decisions, so each run is decided as a replay in offset order decides it; only the
   * interleaving of runs in the output moves. A record whose decision is skipped (its run waits for
   * another task's claim, or its attempts are spent) released nothing before; read, it does (D60).
   */
  private void releaseDue(long nowMs, boolean aheadOfParked) {
    long dueBefore = nowMs - windowMs;
    while (held.size() > 0
        && held.earliestArrival() <= dueBefore
        && !(aheadOfParked && parked.hasRun(held.earliestRun()))) {
      applyReleased(held.releaseEarliest(), false);
    }
  }

  /**
   * Applies released events, oldest first. Each is newer than its run's state: it was when held,
   * and a run's older held events are released with or before it.
   */
  private void applyReleased(List<ReorderBuffer.Held> events, boolean early) {
    long now = wallClock.getAsLong();
    for (ReorderBuffer.Held h : events) {
      PendingEvent event = h.event();
      if (!early) {
        metrics.releasedAfter(event.timestamp() + windowMs, now);
      }
      runs.applyReleased(h.offset(), event, ranges.of(h.offset(), event.headers()));
    }
    metrics.outcome(Outcome.APPLY, events.size());
    metrics.released(early, events.size());
  }
}
