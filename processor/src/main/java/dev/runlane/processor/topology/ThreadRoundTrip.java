package dev.runlane.processor.topology;

import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.ClaimAnswer;
import dev.runlane.processor.dedup.ClaimRequest;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The Redis round trips of one stream thread's tasks. At a live rate each task drains a few events
 * every batch interval; a round trip of its own would cost the thread a trip per task per interval
 * (twelve tasks: 600 a second), and the thread, not Redis, is what the end-to-end latency waits
 * for. So the first task of a pass to make a round trip, to claim or to write the markers it owes,
 * also claims what the others parked since their last drain and writes the markers they owe; they
 * decide on those answers at their own drain (D45, D104).
 *
 * <p>Each task's share (ids it parked, markers it owes, answers taken for it) lives here, keyed by
 * the task's owner token, and a task reaches it only through this API: no task reads or changes
 * another's fields. Used by its stream thread only, so not synchronised.
 */
final class ThreadRoundTrip {
  private final Dedup dedup;

  /**
   * A random fraction of the batch interval, so that the threads and instances sharing a Redis do
   * not all reach it at the same instants.
   */
  private final double phase = ThreadLocalRandom.current().nextDouble();

  private final Map<String, Share> shares = new LinkedHashMap<>();

  /** One task's part. */
  private static final class Share {
    final Map<String, EventKey> parked = new LinkedHashMap<>();
    final Map<String, Marker> owed = new LinkedHashMap<>();
    final Map<String, Claim> prefetched = new HashMap<>();
    final Map<String, EventKey> prefetchedKeys = new HashMap<>();
    long prefetchedAtMs;
  }

  /** What a round trip answered the task that made it. */
  record Answer(Map<String, Claim> claims, List<String> markersWritten) {}

  ThreadRoundTrip(Dedup dedup) {
    this.dedup = dedup;
  }

  /** The first drain after {@code nowMs} on this thread's grid, so its tasks drain together. */
  long nextDrain(long nowMs, long everyMs) {
    long offset = (long) (phase * everyMs);
    return Math.floorDiv(nowMs - offset, everyMs) * everyMs + everyMs + offset;
  }

  void join(String owner) {
    shares.putIfAbsent(owner, new Share());
  }

  /** What a leaving task still had here. */
  record Left(List<Marker> owed, List<EventKey> unused) {}

  /**
   * Leaves, handing back the markers the task owes (to write at close) and the claims taken for it
   * that it never used (to release).
   */
  Left leave(String owner) {
    if (!shares.containsKey(owner)) {
      return new Left(List.of(), List.of());
    }
    List<EventKey> unused = takeUnused(owner);
    return new Left(List.copyOf(shares.remove(owner).owed.values()), unused);
  }

  /** An event the task parked, which the next round trip of the thread may claim for it. */
  void parked(String owner, EventKey event) {
    share(owner).parked.putIfAbsent(event.requestId(), event);
  }

  /** Markers the task owes; one for an id it owes already replaces it (the latest outcome). */
  void owe(String owner, Collection<Marker> markers) {
    Map<String, Marker> owed = share(owner).owed;
    for (Marker m : markers) {
      owed.remove(m.requestId());
      owed.put(m.requestId(), m);
    }
  }

  boolean owes(String owner) {
    return !share(owner).owed.isEmpty();
  }

  /**
   * The claims for the task's {@code events}: those another task's round trip took for it no more
   * than {@code maxAgeMs} ago, and the rest in one round trip that writes every task's markers
   * first and claims what the other tasks parked. Answers older than that are dropped unused: a
   * claim this task still holds reads back as its own.
   *
   * @throws dev.runlane.processor.dedup.DedupUnavailableException if Redis does not answer; nothing
   *     here changed then
   */
  Answer claim(String owner, List<EventKey> events, long nowMs, long maxAgeMs) {
    Share mine = share(owner);
    if (!mine.prefetched.isEmpty() && nowMs - mine.prefetchedAtMs > maxAgeMs) {
      mine.prefetched.clear();
      mine.prefetchedKeys.clear();
    }
    Map<String, Claim> claims = new HashMap<>(events.size() * 2);
    List<EventKey> toAsk = new ArrayList<>();
    for (EventKey event : events) {
      mine.parked.remove(event.requestId());
      Claim taken = mine.prefetched.remove(event.requestId());
      EventKey takenFor = mine.prefetchedKeys.remove(event.requestId());
      if (taken != null && event.equals(takenFor)) {
        claims.put(event.requestId(), taken);
      } else {
        toAsk.add(event); // a claim taken for this id on another run reads back as this task's
      }
    }
    if (toAsk.isEmpty()) {
      return new Answer(claims, List.of());
    }
    return roundTrip(owner, toAsk, claims, nowMs);
  }

  /**
   * The round trip of a task that owes markers and has nothing to claim: its markers and every
   * marker the thread's other tasks owe written, and what they parked claimed for them, as a
   * claim's round trip does. The thread's tasks drain in one pass, and a task that drained ahead of
   * the pass's first claimer used to write its markers in a round trip of its own: with twelve
   * tasks on a thread, several trips a pass where one does (D104).
   *
   * @return the request ids whose markers were written, this task's and the others'
   * @throws dev.runlane.processor.dedup.DedupUnavailableException if Redis does not answer; nothing
   *     here changed then
   */
  List<String> writeOwed(String owner, long nowMs) {
    return roundTrip(owner, List.of(), new HashMap<>(), nowMs).markersWritten();
  }

  /**
   * One round trip for {@code owner}: every task's markers first, then {@code toAsk} for it and
   * what the other tasks parked for them; {@code claims} (the answers taken for it already) gets
   * its answers.
   */
  private Answer roundTrip(
      String owner, List<EventKey> toAsk, Map<String, Claim> claims, long nowMs) {
    Share mine = share(owner);
    List<ClaimRequest> requests = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    requests.add(new ClaimRequest(owner, List.copyOf(mine.owed.values()), toAsk));
    owners.add(owner);
    shares.forEach(
        (other, share) -> {
          if (!other.equals(owner) && (!share.parked.isEmpty() || !share.owed.isEmpty())) {
            requests.add(
                new ClaimRequest(
                    other, List.copyOf(share.owed.values()), List.copyOf(share.parked.values())));
            owners.add(other);
          }
        });
    ClaimAnswer answer;
    try {
      answer = dedup.claim(requests);
    } catch (DedupUnavailableException e) {
      if (claims.isEmpty()) {
        throw e;
      }
      // The answers another task's round trip took for this one stand: only the ids asked now
      // are decided on the run store (D82). Thrown away, their claims would wait out the TTL.
      toAsk.forEach(event -> claims.put(event.requestId(), Claim.UNAVAILABLE));
      return new Answer(claims, List.of());
    }
    List<String> written = new ArrayList<>();
    for (int i = 0; i < requests.size(); i++) {
      ClaimRequest request = requests.get(i);
      Share share = shares.get(owners.get(i));
      for (Marker m : request.doneFirst()) {
        if (!answer.unwritten().contains(m.requestId())) { // else still owed (D82)
          share.owed.remove(m.requestId(), m);
          written.add(m.requestId());
        }
      }
      if (i == 0) {
        claims.putAll(answer.claims().get(0));
        continue;
      }
      prefetched(share, request, answer.claims().get(i), nowMs);
    }
    return new Answer(claims, written);
  }

  /**
   * Keeps the answers taken for another task's parked events. One whose node did not answer is not
   * kept: the event stays parked, and the task's own drain asks again (D82).
   */
  private static void prefetched(
      Share share, ClaimRequest request, Map<String, Claim> answers, long nowMs) {
    for (EventKey event : request.events()) {
      Claim claim = answers.get(event.requestId());
      if (claim == null || claim == Claim.UNAVAILABLE) {
        continue;
      }
      if (share.prefetched.isEmpty()) {
        share.prefetchedAtMs = nowMs;
      }
      share.prefetched.put(event.requestId(), claim);
      share.prefetchedKeys.put(event.requestId(), event);
      share.parked.remove(event.requestId());
    }
  }

  /**
   * The claims other tasks took for this one that its drain did not use (its runs wait, or the
   * events were decided otherwise): handed back for release.
   */
  List<EventKey> takeUnused(String owner) {
    Share mine = share(owner);
    List<EventKey> unused = new ArrayList<>();
    mine.prefetchedKeys.forEach(
        (id, key) -> {
          Claim claim = mine.prefetched.get(id);
          if (claim != null && claim.releasable()) {
            unused.add(key);
          }
        });
    mine.prefetched.clear();
    mine.prefetchedKeys.clear();
    return unused;
  }

  private Share share(String owner) {
    return shares.computeIfAbsent(owner, o -> new Share());
  }
}
