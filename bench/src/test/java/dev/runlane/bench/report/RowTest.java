package dev.runlane.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RowTest {

  @Test
  void aFigureHasNoBaselineAndNoTarget() {
    assertThat(Row.figure("s", "f", 1.5, "ms"))
        .isEqualTo(new Row("s", "f", 1.5, "ms", "", Double.NaN, Double.NaN, "", null));
  }

  @Test
  void aTargetKeepsTheBaselineItWasComparedWith() {
    assertThat(
            Row.figure("s", "f", 2, "events/s").against("off", 4, 0.5).withTarget(">= 0.7x", false))
        .isEqualTo(new Row("s", "f", 2, "events/s", "off", 4, 0.5, ">= 0.7x", false));
    assertThat(Row.figure("s", "f", 0, "records").withTarget("0", true))
        .isEqualTo(new Row("s", "f", 0, "records", "", Double.NaN, Double.NaN, "0", true));
  }
}
