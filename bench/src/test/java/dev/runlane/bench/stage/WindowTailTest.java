package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class WindowTailTest {

  @Test
  void aWindowsTailIsReadFromTheDifferenceOfTwoSnapshots() {
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    registry.config().meterFilter(Pipeline.RECEIVE_LATENCY_BUCKETS);
    Timer timer = Timer.builder(ProcessorMetrics.END_TO_END).register(registry);
    for (int i = 0; i < 1000; i++) {
      timer.record(Duration.ofMillis(400)); // an earlier, bad window
    }
    CountAtBucket[] before = timer.takeSnapshot().histogramCounts();
    for (int i = 0; i < 1000; i++) {
      timer.record(Duration.ofMillis(i < 995 ? 20 : 150));
    }
    CountAtBucket[] after = timer.takeSnapshot().histogramCounts();

    // 99% of this window is at 20 ms: the earlier window's 400 ms must not show through.
    assertThat(SoakStage.p99Bound(before, after)).isBetween(20.0, 25.0);
    assertThat(SoakStage.p99Bound(after, after))
        .as("a window with nothing recorded has no tail")
        .isNaN();
    registry.close();
  }
}
