package dev.runlane.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.concurrent.atomic.AtomicBoolean;
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

  /**
   * An answer that arrives after the load's drain timeout is recorded while the window's summary is
   * read (the cost stage's first run failed so, D92): the summary reads a copy.
   */
  @Test
  void aSummaryReadWhileAnswersAreStillRecordedDoesNotFail() throws Exception {
    Latency latency = new Latency();
    AtomicBoolean stop = new AtomicBoolean();
    Thread recorder =
        new Thread(
            () -> {
              for (long i = 0; !stop.get(); i++) {
                latency.recordNanos((i % 50_000) * 1_000L);
              }
            });
    recorder.start();
    try {
      long last = 0;
      for (int i = 0; i < 300; i++) {
        Latency.Summary s = latency.summary();
        assertThat(s.count()).isGreaterThanOrEqualTo(last);
        last = s.count();
      }
    } finally {
      stop.set(true);
      recorder.join();
    }
  }
}
