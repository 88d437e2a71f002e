package dev.runlane.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StagesTest {

  @Test
  void theUsageNamesEveryStageInTheOrderOfARun() {
    assertThat(Stages.usage())
        .isEqualTo(
            "usage: java -jar runlane-bench.jar [--quick] [--out DIR] [stage...]\n"
                + "  stages: verification ingress processor e2e cost recovery restart rebuild generations"
                + " sink trace (default: all); opt-in: soak redis-cluster");
    assertThat(Stages.unknown("nope"))
        .isEqualTo(
            "unknown stage 'nope'; stages: [verification, ingress, processor, e2e, cost,"
                + " recovery, restart, rebuild, generations, sink, trace], opt-in: [soak,"
                + " redis-cluster]");
  }

  @Test
  void namedStagesRunInTheCanonicalOrderAndNoneNamedMeansAllButTheOptInOnes() {
    assertThat(Stages.select(List.of("soak", "e2e", "ingress")).stream().map(Stage::name))
        .containsExactly("ingress", "e2e", "soak");
    assertThat(Stages.select(List.of()).stream().map(Stage::name))
        .containsExactlyElementsOf(Stages.names(false))
        .doesNotContain("soak");
  }

  @Test
  void theStagesNamesAreDistinctAndKnown() {
    assertThat(Stages.ALL.stream().map(Stage::name)).doesNotHaveDuplicates();
    assertThat(Stages.exists("sink")).isTrue();
    assertThat(Stages.exists("Sink")).isFalse(); // the command line lower-cases first
  }

  @Test
  void aRunRecordsTheTuningAndSizingVariablesOfEveryStage() {
    assertThat(Stages.variables())
        .contains(
            "INGRESS_PRODUCER_LINGER_MS",
            "PROCESSOR_REORDER_WINDOW",
            "BENCH_SOAK_RATE",
            "BENCH_SOAK_SECONDS",
            "BENCH_RECOVERY_RUNS")
        .doesNotHaveDuplicates();
  }
}
