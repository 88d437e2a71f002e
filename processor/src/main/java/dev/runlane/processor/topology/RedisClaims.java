package dev.runlane.processor.topology;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task's claims against Redis (design.md §6.2, §6.3): a batch's ids claimed in one round trip,
 * which carries the stream thread's other tasks too (D45); the done markers a batch leaves, owed to
 * the next round trip (D22); and claims taken and not decided, given back by compare-and-delete.
 * Every call counts against the thread's Redis time per transaction (D42).
 *
 * <p>Lives as long as its processor, so that its drain count and block-mode clock outlast an {@code
 * init()} again; the task's owner token and round trip come with each {@code init()}.
 */
final class RedisClaims {
  /** The processor's log lines keep its logger name, which log settings and filters know. */
  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  /** Between two attempts to reach Redis in block mode. */
  private static final Duration BLOCK_RETRY = Duration.ofMillis(100);

  private final TopologySettings settings;
  private final Dedup dedup;
  private final RedisBudget budget;
  private final ProcessorMetrics metrics;
  private final FaultHook faultHook;

  private String owner;

  /** This stream thread's round trips, which hold this task's markers and parked ids (D45). */
  private ThreadRoundTrip roundTrip;

  private LongSupplier wallClock;

  private long drains;

  /** The drain in which the oldest marker this task owes was queued. */
  private long doneLaterDrain;

  /** In block mode, since when Redis has not answered this task (System.nanoTime), or -1. */
  private long blockedSinceNanos = -1;

  RedisClaims(
      TopologySettings settings,
      Dedup dedup,
      RedisBudget budget,
      ProcessorMetrics metrics,
      FaultHook faultHook) {
    this.settings = settings;
    this.dedup = dedup;
    this.budget = budget;
    this.metrics = metrics;
    this.faultHook = faultHook;
  }

  /** The task (re)starts as {@code owner} on the calling stream thread's {@code roundTrip}. */
  void join(String owner, ThreadRoundTrip roundTrip, LongSupplier wallClock) {
    this.owner = owner;
    this.roundTrip = roundTrip;
    this.wallClock = wallClock;
    roundTrip.join(owner);
  }

  /** Whether Redis is asked at all (false: benchmarks of the bare topology). */
  boolean enabled() {
    return dedup.enabled();
  }

  /** The first drain after {@code nowMs} on the thread's grid, so its tasks drain together. */
  long nextDrain(long nowMs) {
    return roundTrip.nextDrain(nowMs, settings.batchInterval().toMillis());
  }

  /** An event just parked: the thread's next round trip may claim it for this task. */
  void parked(EventKey event, Replay.Range range) {
    if (dedup.enabled() && !range.storeAlone()) {
      roundTrip.parked(owner, event);
    }
  }

  void drainStarted() {
    drains++;
  }

  /**
   * Claims {@code events}: with the answers another task's round trip took for them, or in one
   * round trip that also carries the thread's other tasks (D45). Every claim is {@code UNAVAILABLE}
   * when Redis is not asked or does not answer in degrade mode.
   *
   * @return the claims and the markers the round trip wrote, or null when block mode must wait for
   *     the next transaction
   */
  ThreadRoundTrip.Answer claim(List<EventKey> events) {
    if (events.isEmpty()) {
      return new ThreadRoundTrip.Answer(Map.of(), List.of());
    }
    boolean degrade = settings.redisFailureMode() == RedisFailureMode.DEGRADE;
    while (dedup.enabled()) {
      if (!budget.allows()) {
        metrics.redisBudgetSpent();
        if (degrade) {
          break; // decided on the run store alone until the transaction commits
        }
        return null;
      }
      long start = System.nanoTime();
      try {
        ThreadRoundTrip.Answer answer =
            roundTrip.claim(
                owner, events, wallClock.getAsLong(), settings.batchInterval().toMillis());
        budget.spend(System.nanoTime() - start);
        if (!degrade && answer.claims().containsValue(Claim.UNAVAILABLE)) {
          // Block mode holds a batch until every node it needs answers (D82); the claims taken
          // meanwhile read back as this task's.
          waitForRedis(new DedupUnavailableException("a redis node did not answer", null));
          continue;
        }
        blockedSinceNanos = -1;
        return answer;
      } catch (DedupUnavailableException e) {
        budget.spend(System.nanoTime() - start);
        if (degrade) {
          break; // the markers wait for Redis to answer again
        }
        waitForRedis(e);
      }
    }
    Map<String, Claim> unavailable = new HashMap<>(events.size() * 2);
    events.forEach(event -> unavailable.put(event.requestId(), Claim.UNAVAILABLE));
    return new ThreadRoundTrip.Answer(unavailable, List.of());
  }

  /**
   * Which of {@code events}, decided on the run store alone, have an id whose marker names another
   * run (D70): one read-only round trip, counted against the transaction's Redis time. None when
   * Redis is not asked, out of budget or does not answer: the run store and its record decide, as
   * before.
   */
  Set<String> takenForOtherRuns(List<EventKey> events) {
    if (events.isEmpty() || !dedup.enabled() || !budget.allows()) {
      return Set.of();
    }
    long start = System.nanoTime();
    try {
      return dedup.takenForOtherRuns(events);
    } catch (DedupUnavailableException e) {
      return Set.of();
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }

  /** Owes a batch's done markers to the next round trip; one for an id owed already replaces it. */
  void owe(Collection<Marker> markers) {
    if (markers.isEmpty()) {
      return;
    }
    if (!roundTrip.owes(owner)) {
      doneLaterDrain = drains;
    }
    roundTrip.owe(owner, markers); // decided again: the latest outcome counts
  }

  /** Gives back claims this task took and did not decide, so that a retry can take them. */
  void giveBack(List<EventKey> events) {
    if (events.isEmpty() || !dedup.enabled() || !budget.allows()) {
      return; // not given back, they expire after the claim TTL
    }
    long start = System.nanoTime();
    try {
      dedup.release(owner, events);
    } catch (RuntimeException e) {
      log.warn("claims not released (they expire after the claim TTL): {}", e.toString());
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }

  /**
   * At the end of a drain: gives back the claims a peer took for events whose run waits, as for a
   * batch's own, and writes the markers owed if they waited a whole drain with nothing to claim
   * since, on a round trip that carries the thread's other tasks too (D104).
   */
  void drainEnded() {
    giveBack(roundTrip.takeUnused(owner));
    if (roundTrip.owes(owner) && doneLaterDrain < drains && budget.allows()) {
      writeOwed();
    }
  }

  /**
   * Writes the last batch's done markers. On a clean close (revocation, shutdown) Streams has
   * committed them already. On a dirty close the transaction aborts, and a done of this task is
   * then the case the decision table is built for (design.md §6.2): not trusted for a newer event.
   * Left unwritten, the claims would expire after the claim TTL, and a late copy of an applied id
   * would read as stale instead of duplicate.
   */
  void close() {
    if (roundTrip == null) {
      return;
    }
    ThreadRoundTrip.Left left = roundTrip.leave(owner);
    giveBack(left.unused());
    if (left.owed().isEmpty()) {
      return;
    }
    try {
      int unwritten = left.owed().size() - writeMarkers(left.owed()).size();
      if (unwritten > 0) {
        log.warn("{} done markers not written at close: Redis did not answer", unwritten);
      }
    } catch (RuntimeException e) {
      log.warn("done markers not written at close (claims expire after the TTL): {}", e.toString());
    }
  }

  /**
   * Block mode: waits a moment before asking Redis again, or fails the thread once Redis has not
   * answered for the block timeout, so that its tasks restart from the last commit.
   */
  private void waitForRedis(DedupUnavailableException e) {
    long now = System.nanoTime();
    if (blockedSinceNanos < 0) {
      blockedSinceNanos = now;
    }
    if (now - blockedSinceNanos > settings.redisBlockTimeout().toNanos()) {
      throw new IllegalStateException(
          "redis unavailable for longer than REDIS_BLOCK_TIMEOUT_SECONDS in block mode", e);
    }
    LockSupport.parkNanos(BLOCK_RETRY.toNanos());
    budget.spend(BLOCK_RETRY.toNanos());
  }

  /**
   * Writes the waiting done markers (nothing to claim since) on a round trip of the thread's, which
   * writes its other tasks' markers and claims what they parked too: the tasks after this one in
   * the pass then make none (D104). If Redis does not answer they keep waiting; at most a batch's
   * worth, as no claim is held meanwhile.
   */
  private void writeOwed() {
    long start = System.nanoTime();
    try {
      List<String> written = roundTrip.writeOwed(owner, wallClock.getAsLong());
      if (!written.isEmpty()) {
        faultHook.afterMarkDone(written);
      }
    } catch (DedupUnavailableException e) {
      log.debug("done markers not written yet: {}", e.getMessage());
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }

  /** The markers written; those whose node did not answer keep waiting (D82). */
  private List<Marker> writeMarkers(List<Marker> markers) {
    long start = System.nanoTime();
    try {
      Set<String> unwritten = dedup.markDone(owner, markers);
      return markers.stream().filter(m -> !unwritten.contains(m.requestId())).toList();
    } catch (DedupUnavailableException e) {
      log.debug("done markers not written yet: {}", e.getMessage());
      return List.of();
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }
}
