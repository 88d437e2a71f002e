package dev.runlane.local.simulator;

import java.time.Duration;
import java.util.List;

/**
 * How one event is delivered.
 *
 * @param event the event
 * @param concurrentCopies how many deliveries start at once (1 = no concurrent duplicate)
 * @param redeliveryDelays nominal delays, after the first ack, of extra deliveries of the same
 *     event (empty = none)
 * @param slowFirstAttempt whether the first attempt gives up before the ingress answers
 * @param reordered whether this event is sent after a newer event of its run
 */
public record EventPlan(
    SimulatedEvent event,
    int concurrentCopies,
    List<Duration> redeliveryDelays,
    boolean slowFirstAttempt,
    boolean reordered) {

  public EventPlan {
    if (concurrentCopies < 1) {
      throw new IllegalArgumentException("concurrentCopies must be at least 1");
    }
    redeliveryDelays = List.copyOf(redeliveryDelays);
  }
}
