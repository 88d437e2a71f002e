package dev.runlane.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BrokerOverridesTest {

  @Test
  void pairsAreSplitOnCommasAndTheFirstEquals() {
    assertThat(
            BenchContext.brokerOverrides(
                "log.segment.bytes=1073741824, log.cleaner.io.max.bytes.per.second=1.6E7"))
        .containsExactly(
            java.util.Map.entry("log.segment.bytes", "1073741824"),
            java.util.Map.entry("log.cleaner.io.max.bytes.per.second", "1.6E7"));
  }

  @Test
  void unsetMeansNoOverride() {
    assertThat(BenchContext.brokerOverrides(null)).isEmpty();
    assertThat(BenchContext.brokerOverrides(" ")).isEmpty();
  }

  @Test
  void theBrokerKeepsKafkasOwnSegmentSizeUnlessARunOverridesIt() {
    assertThat(BenchContext.brokerConfig(null)).containsEntry("log.segment.bytes", "1073741824");
    assertThat(BenchContext.brokerConfig("log.segment.bytes=16777216, num.io.threads=4"))
        .containsEntry("log.segment.bytes", "16777216")
        .containsEntry("num.io.threads", "4");
  }

  @Test
  void aPairWithoutANameIsRefusedByName() {
    assertThatThrownBy(() -> BenchContext.brokerOverrides("log.segment.bytes"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BENCH_BROKER_CONFIG")
        .hasMessageContaining("'log.segment.bytes' is not name=value");
  }
}
