package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BucketWindowTest {
  private static final String SERIES = "runlane_sink_end_to_end_latency_seconds";

  private static String scrape(long under10ms, long under100ms, long all) {
    return String.join(
        "\n",
        "# TYPE " + SERIES + " histogram",
        SERIES + "_bucket{service=\"sink\",le=\"0.01\"} " + under10ms,
        SERIES + "_bucket{service=\"sink\",le=\"0.1\"} " + under100ms,
        SERIES + "_bucket{service=\"sink\",le=\"+Inf\"} " + all,
        SERIES + "_count{service=\"sink\"} " + all,
        "other_bucket{le=\"0.01\"} 99");
  }

  @Test
  void quantilesOfTheWindowBetweenTwoScrapesAreBucketBounds() {
    var before = EndToEndStage.BucketWindow.buckets(scrape(100, 100, 100), SERIES);
    // In the window: 50 under 10 ms, 49 more under 100 ms, 1 above.
    var after = EndToEndStage.BucketWindow.buckets(scrape(150, 199, 200), SERIES);

    EndToEndStage.BucketWindow w = EndToEndStage.BucketWindow.between(before, after);

    assertThat(w.count()).isEqualTo(100);
    assertThat(w.percentile(0.50)).isEqualTo(10.0);
    assertThat(w.percentile(0.99)).isEqualTo(100.0);
    assertThat(w.percentile(0.999)).isEqualTo(Double.POSITIVE_INFINITY);
  }

  @Test
  void anEmptyWindowHasNoQuantiles() {
    var same = EndToEndStage.BucketWindow.buckets(scrape(1, 2, 3), SERIES);
    assertThat(EndToEndStage.BucketWindow.between(same, same).percentile(0.5)).isNaN();
  }
}
