package dev.runlane.local.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RetryScheduleTest {

  @Test
  void sumeDoublesFromThirtySecondsAndCapsAtOneHour() {
    assertThat(IntStream.rangeClosed(1, 9).mapToObj(RetrySchedule.SUME::nominalDelayAfter))
        .containsExactly(
            Duration.ofSeconds(30),
            Duration.ofSeconds(60),
            Duration.ofSeconds(120),
            Duration.ofSeconds(240),
            Duration.ofSeconds(480),
            Duration.ofSeconds(960),
            Duration.ofSeconds(1920),
            Duration.ofHours(1),
            Duration.ofHours(1));
  }

  @Test
  void sumeMakesTenAttemptsAtMost() {
    assertThat(RetrySchedule.SUME.hasNext(9)).isTrue();
    assertThat(RetrySchedule.SUME.hasNext(10)).isFalse();
    assertThat(RetrySchedule.SUME.nominalHorizon()).isEqualTo(Duration.ofSeconds(11_010));
  }

  @Test
  void timeScaleCompressesWaitsButNotTheNominalSchedule() {
    RetrySchedule fast = RetrySchedule.SUME.withTimeScale(60);
    assertThat(fast.delayAfter(9)).isEqualTo(Duration.ofMinutes(1));
    assertThat(fast.delayAfter(1)).isEqualTo(Duration.ofMillis(500));
    assertThat(fast.nominalDelayAfter(9)).isEqualTo(Duration.ofHours(1));
    assertThat(RetrySchedule.SUME.delayAfter(1)).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void capHoldsForLargeAttemptNumbers() {
    RetrySchedule many = new RetrySchedule(Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 100, 1);
    assertThat(many.nominalDelayAfter(99)).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void rejectsATimeScaleBelowOne() {
    assertThatThrownBy(() -> RetrySchedule.SUME.withTimeScale(0.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeScale");
  }
}
