package dev.runlane.local.verify;

import dev.runlane.local.simulator.Ledger.SentEvent;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What the simulator sent, from its {@code Ledger}'s snapshot: each event, indexed by request id
 * and by run, and the request ids the ingress acked.
 */
final class SentEvents {

  private final List<SentEvent> all;
  private final Map<String, SentEvent> byId = new HashMap<>();
  private final Set<String> acked;
  private final Map<String, List<SentEvent>> byRun;

  SentEvents(List<SentEvent> snapshot) {
    this.all = List.copyOf(snapshot);
    all.forEach(s -> byId.put(s.event().requestId(), s));
    this.acked =
        all.stream()
            .filter(SentEvent::acked)
            .map(s -> s.event().requestId())
            .collect(Collectors.toSet());
    this.byRun = all.stream().collect(Collectors.groupingBy(s -> s.event().runId()));
  }

  /** Every event sent, in the ledger's order. */
  List<SentEvent> all() {
    return all;
  }

  /** How many events were sent. */
  int size() {
    return all.size();
  }

  /** The event sent with {@code requestId}, or null when none was. */
  SentEvent byId(String requestId) {
    return byId.get(requestId);
  }

  /** Whether an event with {@code requestId} was sent. */
  boolean wasSent(String requestId) {
    return byId.containsKey(requestId);
  }

  /** The request ids the ingress acked (read-only). */
  Set<String> acked() {
    return Collections.unmodifiableSet(acked);
  }

  /** Run id -> the events sent for it (read-only). */
  Map<String, List<SentEvent>> byRun() {
    return Collections.unmodifiableMap(byRun);
  }
}
