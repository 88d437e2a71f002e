package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CapacitySearchTest {

  @Test
  void theCoresAddedBetweenTwoStepsOverTheRateAddedAreMicrosecondsPerFurtherWebhook() {
    // 0.30 cores of ingress at 1k/s and 0.50 at 5k/s: 0.20 cores for 4,000 more webhooks a second.
    StepCpu.Cores low = new StepCpu.Cores(Map.of("ingress", 0.30, "processor", 0.40), 0.1, 0.5);
    StepCpu.Cores high = new StepCpu.Cores(Map.of("ingress", 0.50, "processor", 0.80), 0.2, 0.9);

    Map<String, Double> us = CapacitySearch.marginalMicros(low, high, 4000);

    assertThat(us.get("ingress")).isCloseTo(50.0, within(1e-9));
    assertThat(us.get("processor")).isCloseTo(100.0, within(1e-9));
    assertThat(us.get(CostStage.TOTAL)).isCloseTo(150.0, within(1e-9));
  }

  @Test
  void withoutTwoKeptUpStepsThereIsNoFigure() {
    StepCpu.Cores one = new StepCpu.Cores(Map.of("ingress", 0.30), 0.1, 0.5);

    assertThat(CapacitySearch.marginalMicros(null, null, 0)).isEmpty();
    assertThat(CapacitySearch.marginalMicros(one, one, 0)).isEmpty();
  }
}
