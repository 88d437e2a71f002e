package dev.runlane.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RateScheduleTest {

  @Test
  void intendedStartsAreEvenlySpacedFromTheStart() {
    RateSchedule s = new RateSchedule(1_000, 1000); // 1 ms apart
    assertThat(s.intendedStart(0)).isEqualTo(1_000);
    assertThat(s.intendedStart(1)).isEqualTo(1_001_000);
    assertThat(s.intendedStart(1000)).isEqualTo(1_000_001_000L);
  }

  @Test
  void dueCountsEveryRequestWhoseStartHasPassedEvenAfterAStall() {
    RateSchedule s = new RateSchedule(0, 1000);
    assertThat(s.dueBy(-1)).isZero();
    assertThat(s.dueBy(0)).isEqualTo(1);
    assertThat(s.dueBy(999_999)).isEqualTo(1);
    assertThat(s.dueBy(1_000_000)).isEqualTo(2);
    // A sender that stalled for 50 ms owes the 50 requests it missed: open loop, no omission.
    assertThat(s.dueBy(50_500_000)).isEqualTo(51);
  }

  @Test
  void dueIsConsistentWithIntendedStartForAFractionalPeriod() {
    RateSchedule s = new RateSchedule(123, 3000); // 333,333.3 ns apart
    for (long i = 0; i < 10_000; i++) {
      long at = s.intendedStart(i);
      assertThat(s.dueBy(at)).isEqualTo(i + 1);
      assertThat(s.dueBy(at - 1)).isEqualTo(i);
    }
  }

  @Test
  void countWithinIsRateTimesDuration() {
    assertThat(new RateSchedule(0, 5000).countWithin(10)).isEqualTo(50_000);
    assertThat(new RateSchedule(0, 2500).countWithin(0.5)).isEqualTo(1250);
  }

  @Test
  void rejectsANonPositiveRate() {
    assertThatThrownBy(() -> new RateSchedule(0, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
