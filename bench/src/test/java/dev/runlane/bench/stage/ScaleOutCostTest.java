package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.runlane.bench.report.Row;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScaleOutCostTest {

  @Test
  void theProcessorsOfAWindowAreSummedAndNothingElse() {
    Map<String, Double> us = new LinkedHashMap<>();
    us.put("ingress", 150.0);
    us.put("processor-a", 80.0);
    us.put("processor-b", 70.0);
    us.put("processor-c", 90.0);
    us.put("broker", 200.0);
    us.put("Redis", 30.0);
    us.put(CostStage.TOTAL, 620.0);
    assertThat(ScaleOutCost.processorMicros(us)).isEqualTo(240.0);
    assertThat(ScaleOutCost.processorMicros(Map.of("processor", 220.0, "broker", 200.0)))
        .isEqualTo(220.0);
    us.put("processor-b", Double.NaN); // a window that did not count
    assertThat(ScaleOutCost.processorMicros(us)).isNaN();
    assertThat(ScaleOutCost.processorMicros(Map.of("ingress", 1.0))).isNaN();
  }

  @Test
  void aWindowWaitsUntilTheGroupIsStableAndEveryInstanceHoldsPartitions() {
    List<String> ids = List.of("so3-a", "so3-b", "so3-c");
    // Streams suffixes each thread's consumer to the static id; "so3-ab" is not "so3-a"'s.
    Map<String, Integer> byMember =
        Map.of("so3-a-1", 4, "so3-a-2", 4, "so3-b-1", 8, "so3-c-1", 8, "so3-ab-1", 5);
    Map<String, Integer> held = ScaleOutCost.perInstance(byMember, ids);
    assertThat(held)
        .containsExactly(Map.entry("so3-a", 8), Map.entry("so3-b", 8), Map.entry("so3-c", 8));
    assertThat(ScaleOutCost.spreadProblem(true, held)).isEmpty();
    assertThat(ScaleOutCost.spreadProblem(false, held))
        .hasValueSatisfying(p -> assertThat(p).contains("not stable"));
    Map<String, Integer> twoOfThree =
        ScaleOutCost.perInstance(Map.of("so3-a-1", 12, "so3-b-1", 12), ids);
    assertThat(ScaleOutCost.spreadProblem(true, twoOfThree))
        .hasValueSatisfying(p -> assertThat(p).startsWith("so3-c holds no input partition"));
  }

  @Test
  void theRowHoldsTheMedianOfTheRepetitionsRatiosToOnePointOne() {
    Row met = ScaleOutCost.row(1000, List.of(231.0, 250.0), List.of(220.0, 230.0));
    assertThat(met.value()).isEqualTo(240.5);
    assertThat(met.baselineValue()).isEqualTo(225.0);
    assertThat(met.ratio()).isCloseTo((231.0 / 220 + 250.0 / 230) / 2, within(1e-9));
    assertThat(met.met()).isTrue();
    assertThat(met.figure()).contains("ratio 1.07x (1.05-1.09x over 2)");
    assertThat(ScaleOutCost.row(1000, List.of(260.0, 250.0), List.of(220.0, 230.0)).met())
        .isFalse();
    // Repetitions where a side did not keep up give no ratio: no ratio, not met.
    assertThat(ScaleOutCost.row(1000, List.of(Double.NaN), List.of(220.0)).met()).isFalse();
  }
}
