package dev.runlane.local.simulator;

import java.time.Duration;

/**
 * Sume's delivery schedule: at most {@code maxAttempts} attempts; after failed attempt {@code n}
 * the next one waits {@code initial * multiplier^(n-1)}, capped at {@code max}. A time scale
 * compresses the wall-clock waits (scale 60 turns the one-hour cap into one minute) without
 * changing the nominal schedule; the per-attempt timeout is not scaled (it is a property of the
 * HTTP call).
 *
 * @param initial the wait after the first failed attempt
 * @param multiplier growth per failed attempt, at least 1
 * @param max the cap on any one wait
 * @param maxAttempts attempts per delivery, including the first
 * @param timeScale how many times faster than real time the waits run, at least 1
 */
public record RetrySchedule(
    Duration initial, double multiplier, Duration max, int maxAttempts, double timeScale) {

  /** Sume: 10 attempts, 30 s doubling, capped at one hour, in real time. */
  public static final RetrySchedule SUME =
      new RetrySchedule(Duration.ofSeconds(30), 2.0, Duration.ofHours(1), 10, 1.0);

  public RetrySchedule {
    if (initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("initial must be positive");
    }
    if (multiplier < 1.0) {
      throw new IllegalArgumentException("multiplier must be at least 1");
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("max must be at least initial");
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1");
    }
    if (!(timeScale >= 1.0)) {
      throw new IllegalArgumentException("timeScale must be at least 1");
    }
  }

  /** The same schedule, running {@code scale} times faster than real time. */
  public RetrySchedule withTimeScale(double scale) {
    return new RetrySchedule(initial, multiplier, max, maxAttempts, scale);
  }

  /** Whether another attempt follows failed attempt {@code failedAttempt} (1-based). */
  public boolean hasNext(int failedAttempt) {
    return failedAttempt < maxAttempts;
  }

  /** The nominal wait after failed attempt {@code failedAttempt} (1-based), capped at max. */
  public Duration nominalDelayAfter(int failedAttempt) {
    if (failedAttempt < 1) {
      throw new IllegalArgumentException("attempts are numbered from 1");
    }
    double millis = initial.toMillis() * Math.pow(multiplier, failedAttempt - 1);
    return millis >= max.toMillis() ? max : Duration.ofMillis((long) millis);
  }

  /** The wall-clock wait after failed attempt {@code failedAttempt}: nominal / time scale. */
  public Duration delayAfter(int failedAttempt) {
    return compress(nominalDelayAfter(failedAttempt));
  }

  /** Any nominal duration of the simulated world, as wall-clock time. */
  public Duration compress(Duration nominal) {
    return Duration.ofNanos((long) (nominal.toNanos() / timeScale));
  }

  /** The nominal time from the first attempt to the last one when every attempt fails. */
  public Duration nominalHorizon() {
    Duration total = Duration.ZERO;
    for (int n = 1; n < maxAttempts; n++) {
      total = total.plus(nominalDelayAfter(n));
    }
    return total;
  }
}
