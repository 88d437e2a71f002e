package dev.runlane.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LatencyTest {

  @Test
  void percentilesAreInMillisecondsWithinHistogramPrecision() {
    Latency latency = new Latency();
    for (int i = 1; i <= 1000; i++) {
      latency.recordNanos(i * 1_000_000L); // 1 .. 1000 ms
    }
    Latency.Summary s = latency.summary();
    assertThat(s.count()).isEqualTo(1000);
    assertThat(s.p50()).isCloseTo(500, within(1.0));
    assertThat(s.p99()).isCloseTo(990, within(1.0));
    assertThat(s.p999()).isCloseTo(999, within(1.0));
    assertThat(s.max()).isCloseTo(1000, within(1.0));
  }

  @Test
  void negativeLatenciesCountAsZeroAndHugeOnesAreCapped() {
    Latency latency = new Latency();
    latency.recordNanos(-5_000);
    latency.recordNanos(3_600_000_000_000L); // an hour: capped at a minute
    Latency.Summary s = latency.summary();
    assertThat(s.count()).isEqualTo(2);
    assertThat(s.p50()).isZero();
    assertThat(s.max()).isCloseTo(60_000, within(60.0));
  }
}
