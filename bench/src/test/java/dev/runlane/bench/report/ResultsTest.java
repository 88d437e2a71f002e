package dev.runlane.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ResultsTest {

  @Test
  void jsonEscapesTextAndWritesNullForMissingNumbers() {
    Results r = new Results("quick");
    r.add(Row.figure("s", "a \"quoted\" figure", 1.5, "ms"));
    String json = r.json();
    assertThat(json).contains("\"figure\": \"a \\\"quoted\\\" figure\"");
    assertThat(json).contains("\"baselineValue\": null");
    assertThat(json).contains("\"met\": null");
  }

  @Test
  void markdownHasOneRowPerFigure() {
    Results r = new Results("full");
    r.add(Row.figure("p", "x", 2, "events/s").against("off", 4, 0.5).withTarget(">= 0.7x", false));
    assertThat(r.markdown())
        .contains("| p | x | 2.000 | events/s | off | 4.000 | 0.50x | >= 0.7x | MISSED |");
  }
}
