package dev.runlane.local.verify;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runlane.local.simulator.Ledger.SentEvent;
import dev.runlane.local.simulator.SimulatedEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The checks on what was read downstream, against what the simulator sent: every event acked; no
 * acked event lost; no request id applied twice; nothing applied that was not sent; each run's
 * applied events move forward in (created_at, request_id); every stale event older than an applied
 * one; each run's applied_count; each run's final state is its newest acked event (or a newer one
 * that reached the ingress without an ack); and, for a processor with a reorder window, the
 * window's order (D46).
 */
final class DownstreamChecks {

  /**
   * What the checks found.
   *
   * @param checks each check, in the order made
   * @param lost how many acked events are nowhere downstream
   * @param appliedTwice how many request ids were applied more than once
   */
  record Result(List<Check> checks, long lost, long appliedTwice) {}

  private final SentEvents sent;
  private final Downstream down;

  DownstreamChecks(SentEvents sent, Downstream down) {
    this.sent = sent;
    this.down = down;
  }

  /**
   * Makes every check; the reorder window's only when {@code reorderWindow} is not zero, with
   * {@code held} (the processor's count of held events) in its detail.
   */
  Result check(Duration reorderWindow, long held) {
    List<Check> checks = new ArrayList<>();
    checks.add(everyEventAcked());
    List<String> lost = lost();
    checks.add(
        Check.of(
            "no acked event lost",
            lost,
            sent.acked().size()
                - lost.size()
                + " of "
                + sent.acked().size()
                + " acked events found downstream"));
    List<String> twice = appliedTwice();
    checks.add(
        Check.of(
            "no request_id applied twice",
            twice,
            down.appliedRecords() + " applied records, " + down.applied().size() + " request ids"));
    checks.add(nothingUnsentApplied());
    checks.add(appliedInOrder());
    checks.add(staleOlderThanApplied());
    checks.add(appliedCounts());
    checks.add(finalStates());
    if (!reorderWindow.isZero()) {
      checks.add(reorderWindow(reorderWindow, held));
    }
    return new Result(checks, lost.size(), twice.size());
  }

  private Check everyEventAcked() {
    List<String> notAcked =
        sent.all().stream().filter(s -> !s.acked()).map(s -> s.event().requestId()).toList();
    return Check.of(
        "every event acked by the ingress",
        notAcked,
        sent.size() - notAcked.size() + " of " + sent.size() + " acked");
  }

  private List<String> lost() {
    return sent.acked().stream().filter(id -> !down.holds(id)).toList();
  }

  private List<String> appliedTwice() {
    return down.applied().entrySet().stream()
        .filter(e -> e.getValue() > 1)
        .map(e -> e.getKey() + " x" + e.getValue())
        .toList();
  }

  private Check nothingUnsentApplied() {
    List<String> unknown =
        down.applied().keySet().stream().filter(id -> !sent.wasSent(id)).toList();
    return Check.of("nothing applied that was not sent", unknown, "all applied ids were sent");
  }

  private Check appliedInOrder() {
    List<String> regressions = new ArrayList<>();
    for (Map.Entry<String, List<String>> run : down.appliedOrder().entrySet()) {
      SimulatedEvent previous = null;
      for (String id : run.getValue()) {
        SentEvent s = sent.byId(id);
        if (s == null) {
          continue;
        }
        if (previous != null && !s.event().isNewerThan(previous)) {
          regressions.add(run.getKey() + ": " + id + " after " + previous.requestId());
        }
        previous = s.event();
      }
    }
    return Check.of(
        "each run's applied events move forward",
        regressions,
        down.appliedOrder().size() + " runs in order");
  }

  private Check staleOlderThanApplied() {
    // "Stale" must not be a hiding place for lost events: each one was judged against an applied,
    // newer event of its run.
    List<String> wronglyStale = new ArrayList<>();
    for (String id : down.stale()) {
      if (down.wasApplied(id)) {
        continue; // also applied: a re-delivered copy listed again (the stale stream is
        // at-least-once)
      }
      String against = down.staleAgainst(id);
      SentEvent staleEvent = sent.byId(id);
      SentEvent newer = against == null ? null : sent.byId(against);
      if (staleEvent == null
          || newer == null
          || !down.wasApplied(against)
          || !newer.event().isNewerThan(staleEvent.event())) {
        wronglyStale.add(id + " (judged against " + against + ")");
      }
    }
    return Check.of(
        "every stale event is older than an applied event of its run",
        wronglyStale,
        down.stale().size() + " stale events");
  }

  private Check appliedCounts() {
    // G2 in the run state too: applied_count equals the run's applied events.
    List<String> wrongCounts = new ArrayList<>();
    down.runs()
        .forEach(
            (run, state) -> {
              long count = state.path("applied_count").asLong(-1);
              int applied = down.appliedCount(run);
              if (count != applied) {
                wrongCounts.add(run + " applied_count " + count + " vs " + applied + " applied");
              }
            });
    return Check.of(
        "each run's applied_count equals its applied events",
        wrongCounts,
        down.runs().size() + " runs");
  }

  private Check finalStates() {
    List<String> wrongFinal = new ArrayList<>();
    long appliedWithoutAck = 0;
    long runsWithAck = 0;
    for (Map.Entry<String, List<SentEvent>> run : sent.byRun().entrySet()) {
      SimulatedEvent newestAcked = newestAcked(run.getValue());
      if (newestAcked == null) {
        continue;
      }
      runsWithAck++;
      JsonNode state = down.runs().get(run.getKey());
      String last = state == null ? null : state.path("last_request_id").asText(null);
      if (newestAcked.requestId().equals(last)) {
        continue;
      }
      SentEvent actual = last == null ? null : sent.byId(last);
      if (actual != null && !actual.acked() && actual.event().isNewerThan(newestAcked)) {
        appliedWithoutAck++; // reached the ingress, but its ack was lost: allowed
        continue;
      }
      wrongFinal.add(run.getKey() + " is at " + last + ", newest is " + newestAcked.requestId());
    }
    return Check.of(
        "each run's final state is its newest event",
        wrongFinal,
        runsWithAck
            + " runs"
            + (appliedWithoutAck > 0
                ? ", " + appliedWithoutAck + " at a newer event whose ack was lost"
                : ""));
  }

  private static SimulatedEvent newestAcked(List<SentEvent> events) {
    SimulatedEvent newestAcked = null;
    for (SentEvent s : events) {
      if (s.acked() && (newestAcked == null || s.event().isNewerThan(newestAcked))) {
        newestAcked = s.event();
      }
    }
    return newestAcked;
  }

  private Check reorderWindow(Duration reorderWindow, long held) {
    // Stale only if it was decided a window after the applied event it was judged against
    // arrived: that one was released by then. The processor decides on record timestamps, in
    // partition order (D46); ingress receive times of one partition interleave by a few ms.
    long slackMs = 50;
    List<String> withinWindow = new ArrayList<>();
    for (Downstream.StaleRecord stale : down.staleRecords()) {
      String id = stale.requestId();
      String against = stale.against();
      Long decided = down.decidedNoEarlier(id, stale.timestamp());
      Long againstAt = down.receivedAt(against);
      if (!down.wasApplied(id)
          && decided != null
          && againstAt != null
          && decided - againstAt < reorderWindow.toMillis() - slackMs) {
        withinWindow.add(
            id
                + " decided "
                + (decided - againstAt)
                + " ms after "
                + against
                + " (input "
                + down.inputRecords(id)
                + " vs "
                + down.inputRecords(against)
                + ")");
      }
    }
    return Check.of(
        "every event within the reorder window was applied in order",
        withinWindow,
        held + " held, " + down.stale().size() + " later than the window");
  }
}
