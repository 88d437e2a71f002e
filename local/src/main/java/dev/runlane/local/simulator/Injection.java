package dev.runlane.local.simulator;

import java.time.Duration;

/**
 * What the simulator injects on top of plain deliveries, as shares of generated events.
 *
 * @param redeliveryShare share of events that Sume delivers again after they were acked
 * @param maxRedeliveries at most this many extra deliveries of such an event (at least one)
 * @param maxRedeliveryDelay the latest (nominal, scaled by the time scale) an extra delivery starts
 *     after the first ack
 * @param concurrentShare share of events whose first delivery is sent several times at once
 * @param maxConcurrentCopies at most this many simultaneous copies (at least two)
 * @param reorderShare share of adjacent event pairs of a run sent newer-first
 * @param slowAckShare share of events whose first attempt gives up before the ingress answers, so
 *     an attempt that succeeded is retried
 * @param slowAckTimeout the client-side timeout of such an attempt (shorter than the real ack)
 */
public record Injection(
    double redeliveryShare,
    int maxRedeliveries,
    Duration maxRedeliveryDelay,
    double concurrentShare,
    int maxConcurrentCopies,
    double reorderShare,
    double slowAckShare,
    Duration slowAckTimeout) {

  public Injection {
    for (double share :
        new double[] {redeliveryShare, concurrentShare, reorderShare, slowAckShare}) {
      if (!(share >= 0.0 && share <= 1.0)) {
        throw new IllegalArgumentException("shares must be between 0 and 1");
      }
    }
    if (maxRedeliveries < 1 || maxConcurrentCopies < 2) {
      throw new IllegalArgumentException("maxRedeliveries >= 1 and maxConcurrentCopies >= 2");
    }
    if (maxRedeliveryDelay.compareTo(Duration.ofSeconds(1)) < 0 || slowAckTimeout.isNegative()) {
      throw new IllegalArgumentException("maxRedeliveryDelay >= 1 s, slowAckTimeout >= 0");
    }
  }

  /**
   * What a busy production endpoint sees: 10 % redelivered after ack (1-2 times, within 10 min), 5
   * % sent 2-4 times at once, 10 % of neighbours reordered, 5 % of first attempts timing out before
   * a successful ack (client patience 2 ms).
   */
  public static Injection realistic() {
    return new Injection(
        0.10, 2, Duration.ofMinutes(10), 0.05, 4, 0.10, 0.05, Duration.ofMillis(2));
  }

  /** Plain deliveries only. */
  public static Injection none() {
    return new Injection(0, 1, Duration.ofSeconds(1), 0, 2, 0, 0, Duration.ZERO);
  }
}
