package dev.runlane.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class SpreadTest {

  @Test
  void theMedianOfAnOddCountIsTheMiddleValueAndTheRangeItsEnds() {
    Spread s = Spread.of(List.of(3.0, 1.0, 2.0));
    assertThat(s).isEqualTo(new Spread(2.0, 1.0, 3.0, 3));
    assertThat(s.value()).isEqualTo("2 (1-3 over 3)");
  }

  @Test
  void theMedianOfAnEvenCountIsTheMeanOfTheTwoMiddleValues() {
    assertThat(Spread.of(List.of(4.0, 1.0, 2.0, 10.0)).median()).isEqualTo(3.0);
  }

  @Test
  void ratiosArePairedRepetitionByRepetitionNotMediansDivided() {
    // Medians divided would be 200/100 = 2.0; the repetitions' own ratios are 1.0, 4.0, 1.5.
    Spread s = Spread.ofRatios(List.of(100.0, 400.0, 300.0), List.of(100.0, 100.0, 200.0));
    assertThat(s).isEqualTo(new Spread(1.5, 1.0, 4.0, 3));
    assertThat(s.ratio()).isEqualTo("1.50x (1.00-4.00x over 3)");
  }

  @Test
  void aRepetitionWithNoBaselineGivesNoRatioAndNoneAtAllSaysSo() {
    Spread s = Spread.ofRatios(List.of(100.0, 200.0), List.of(0.0, 100.0));
    assertThat(s).isEqualTo(new Spread(2.0, 2.0, 2.0, 1));
    Spread none = Spread.of(Arrays.asList(Double.NaN, null));
    assertThat(none.count()).isZero();
    assertThat(none.median()).isNaN();
    assertThat(none.ratio()).isEqualTo("n/a");
  }

  @Test
  void listsOfDifferentLengthsAreRefused() {
    assertThatThrownBy(() -> Spread.ofRatios(List.of(1.0), List.of(1.0, 2.0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 values to 2 values");
  }
}
