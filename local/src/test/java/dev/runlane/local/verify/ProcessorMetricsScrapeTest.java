package dev.runlane.local.verify;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProcessorMetricsScrapeTest {

  @Test
  void sumsOutcomesByLayerAndIgnoresOtherMetrics() {
    String text =
        """
        # HELP runlane_processor_events_total events
        # TYPE runlane_processor_events_total counter
        runlane_processor_events_total{layer="redis",outcome="duplicate",service="processor"} 12.0
        runlane_processor_events_total{layer="store",outcome="duplicate",service="processor"} 3.0
        runlane_processor_events_total{layer="store",outcome="applied",service="processor"} 100.0
        runlane_processor_events_total{layer="store",outcome="stale",service="processor"} 7.0
        runlane_ingress_requests_total{outcome="accepted",service="ingress"} 999.0
        """;
    ProcessorMetricsScrape m = ProcessorMetricsScrape.parse(text);
    assertThat(m.count("duplicate", "redis")).isEqualTo(12);
    assertThat(m.count("duplicate", "store")).isEqualTo(3);
    assertThat(m.count("duplicate")).isEqualTo(15);
    assertThat(m.count("applied")).isEqualTo(100);
    assertThat(m.count("stale")).isEqualTo(7);
    assertThat(m.count("invalid")).isZero();
  }
}
