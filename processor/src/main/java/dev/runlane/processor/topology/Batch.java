package dev.runlane.processor.topology;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import dev.runlane.processor.dedup.Outcome;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One batch's decisions (design.md §6.2, §6.3): which ids it claims, which run each id was first
 * seen for, the claim each event is decided with, and the markers and counts its decisions leave.
 */
final class Batch {
  /** The processor's log lines keep its logger name, which log settings and filters know. */
  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  private final ProcessorMetrics metrics;
  private final boolean countDegraded;
  private final int size;

  /** Each id's run at its first event in the batch whose run does not wait already. */
  private final Map<String, String> firstRun = new HashMap<>();

  private final List<EventKey> toClaim = new ArrayList<>();
  private final List<EventKey> decidedAlone = new ArrayList<>();
  private Map<String, Claim> claims = Map.of();
  private Set<String> takenForOtherRuns = Set.of();
  private final Set<String> decidedIds = new HashSet<>();
  private final Map<String, Marker> markers = new LinkedHashMap<>();
  private final Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
  private int degraded; // decided without Redis's answer

  /**
   * @param events the batch's parked events by offset, oldest first
   * @param waitingRuns runs with an event that waits already: none of their events is claimed
   * @param countDegraded whether a decision without Redis's answer counts as degraded (Redis is on)
   */
  Batch(
      List<KeyValue<Long, PendingEvent>> events,
      Set<String> waitingRuns,
      ReplayRanges ranges,
      ProcessorMetrics metrics,
      boolean countDegraded) {
    this.metrics = metrics;
    this.countDegraded = countDegraded;
    this.size = events.size();
    Set<String> asked = new HashSet<>();
    Set<String> lookedUp = new HashSet<>();
    for (KeyValue<Long, PendingEvent> kv : events) {
      PendingEvent event = kv.value;
      if (waitingRuns.contains(event.runId())) {
        continue;
      }
      firstRun.putIfAbsent(event.requestId(), event.runId());
      EventKey key = new EventKey(event.requestId(), event.runId());
      if (!ranges.of(kv.key, event.headers()).storeAlone()) {
        if (asked.add(event.requestId())) {
          toClaim.add(key);
        }
      } else if (lookedUp.add(event.requestId())) {
        decidedAlone.add(key);
      }
    }
  }

  /** The ids to claim, each once, in offset order. */
  List<EventKey> toClaim() {
    return toClaim;
  }

  /**
   * The ids decided on the run store alone (a replay's ranges), each once, in offset order: not
   * claimed, only looked up for a marker that names another run (D70).
   */
  List<EventKey> decidedAlone() {
    return decidedAlone;
  }

  /** The ids of {@link #decidedAlone()} whose marker names another run than their event's. */
  void takenForOtherRuns(Set<String> requestIds) {
    this.takenForOtherRuns = requestIds;
  }

  /** What Redis answered for {@link #toClaim()}, by request id. */
  void claimed(Map<String, Claim> claims) {
    this.claims = claims;
  }

  /**
   * The claim to decide {@code event} with. A request id names one event of one run: a copy that
   * names another run than the id's first event in the batch is that run's reuse, whatever Redis
   * says (D41). Otherwise Redis's answer, with a second copy of an id a duplicate of the first,
   * which holds this task's fresh claim.
   */
  Claim claimOf(PendingEvent event, Replay.Range range) {
    if (!event.runId().equals(firstRun.get(event.requestId()))) {
      return Claim.OTHER_RUN;
    }
    if (range.storeAlone()) {
      // Not claimed, so that no generation's marker skews a re-derived decision (D35); but a
      // marker that names another run says the live decision dead-lettered this copy (D70).
      return takenForOtherRuns.contains(event.requestId()) ? Claim.OTHER_RUN : Claim.REPLAY;
    }
    Claim claim = claims.get(event.requestId());
    if (claim != Claim.UNAVAILABLE && !decidedIds.add(event.requestId())) {
      return Claim.EARLIER_IN_BATCH;
    }
    return claim;
  }

  /** {@code event} was decided {@code outcome} on {@code claim}. */
  void decided(PendingEvent event, Claim claim, Outcome outcome) {
    counts.merge(outcome, 1, Integer::sum);
    if (claim == Claim.UNAVAILABLE) {
      degraded++;
    } else if (claim == Claim.UNKNOWN_MARKER) {
      metrics.unknownMarker();
      log.warn(
          "request_id={} run_id={}: its Redis key holds a value that is no runlane marker;"
              + " decided on the run store alone (another deployment sharing"
              + " DEDUP_KEY_PREFIX?)",
          event.requestId(),
          event.runId());
    }
    // A reuse the task's record saw holds a claim naming the wrong run: given back, not marked
    // done for it, so that Redis never says the id is this run's (D68).
    if (claim.heldByThisTask() && outcome != Outcome.REUSED_STORE) {
      markers.remove(event.requestId());
      markers.put(
          event.requestId(),
          new Marker(new EventKey(event.requestId(), event.runId()), outcome == Outcome.STALE));
    }
  }

  /** The claims this task took and holds, all of which go back if the batch fails. */
  List<EventKey> claimsHeld() {
    List<EventKey> held = new ArrayList<>();
    for (EventKey key : toClaim) {
      Claim claim = claims.get(key.requestId());
      if (claim != null && claim.releasable()) {
        held.add(key);
      }
    }
    return held;
  }

  /** The claims taken for events the batch did not decide (their run waits): given back. */
  List<EventKey> claimsUnused() {
    List<EventKey> unused = claimsHeld();
    unused.removeIf(key -> markers.containsKey(key.requestId()));
    return unused;
  }

  /** The done markers the batch's decisions leave, one per id, the latest outcome last. */
  Collection<Marker> markers() {
    return markers.values();
  }

  /** Counts the batch's decisions. */
  void count() {
    counts.forEach(metrics::outcome);
    if (degraded > 0 && countDegraded) {
      metrics.degraded(degraded);
    }
    metrics.batch(size);
  }
}
