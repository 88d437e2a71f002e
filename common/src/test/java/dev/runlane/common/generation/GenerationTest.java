package dev.runlane.common.generation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class GenerationTest {
  private static final Generation G0 = Generation.initial("runlane-processor", "sume.webhooks");

  private static Generation next(Kind kind, State state, String input) {
    return new Generation(
        1,
        state,
        kind,
        "runlane-processor",
        Generation.applicationId("runlane-processor", 1),
        input,
        24,
        kind == Kind.GROW ? "runlane-processor-runs-changelog" : null,
        null,
        Instant.parse("2026-12-01T10:00:00Z"),
        G0);
  }

  @Test
  void generationZeroRunsTheConfiguredApplicationOnTheConfiguredInputWithoutOwnerPrefix() {
    assertThat(G0.toRun()).isEqualTo(G0);
    assertThat(G0.applicationId()).isEqualTo("runlane-processor");
    assertThat(G0.ingressInput()).isEqualTo("sume.webhooks");
    assertThat(G0.ownerPrefix()).isEmpty();
  }

  @Test
  void aPreparingGrowKeepsTheProcessorsOnThePreviousGenerationButMovesTheIngress() {
    Generation grow = next(Kind.GROW, State.PREPARING, "sume.webhooks.g1");
    assertThat(grow.toRun()).isEqualTo(G0);
    assertThat(grow.ingressInput()).isEqualTo("sume.webhooks.g1");
  }

  @Test
  void aPreparingReplayRunsNoGenerationAndLeavesTheIngressOnItsInput() {
    Generation rebuild = next(Kind.REBUILD, State.PREPARING, "sume.webhooks");
    assertThat(rebuild.toRun()).isNull();
    assertThat(rebuild.ingressInput()).isEqualTo("sume.webhooks");
  }

  @Test
  void aSeedingGrowRunsNoGenerationWhileTheIngressStaysOnTheNewInput() {
    Generation seeding = next(Kind.GROW, State.SEEDING, "sume.webhooks.g1");
    assertThat(seeding.toRun()).isNull();
    assertThat(seeding.ingressInput()).isEqualTo("sume.webhooks.g1");
  }

  @Test
  void anActiveGenerationRunsItselfAndNamesItselfInItsMarkers() {
    Generation active = next(Kind.GROW, State.ACTIVE, "sume.webhooks.g1");
    assertThat(active.toRun()).isEqualTo(active);
    assertThat(active.applicationId()).isEqualTo("runlane-processor-g1");
    assertThat(active.ownerPrefix()).isEqualTo("g1/");
  }

  @Test
  void roundTripsThroughTheControlRecordKeepingOnlyOnePreviousGeneration() {
    Replay replay =
        ReplayTest.onPartition0(
            "reprocess-g2", Instant.parse("2026-12-01T09:00:00Z"), 5, 10, 12, List.of(7L));
    Generation g1 = next(Kind.GROW, State.ACTIVE, "sume.webhooks.g1");
    Generation g2 =
        new Generation(
            2,
            State.ACTIVE,
            Kind.REPROCESS,
            "runlane-processor",
            "runlane-processor-g2",
            "sume.webhooks.g1",
            24,
            g1.seedFrom(),
            replay,
            Instant.parse("2026-12-01T11:00:00Z"),
            g1);

    Generation back = ControlTopic.decode(ControlTopic.encode(g2));

    assertThat(back.replay()).isEqualTo(replay);
    assertThat(back.previous()).isEqualTo(g1.withoutPrevious());
    assertThat(back.withoutPrevious()).isEqualTo(g2.withoutPrevious());
  }

  @Test
  void aGenerationRestoredByAnAbortRunsAgainAndNeverReusesTheAbortedNumber() {
    Generation grow = next(Kind.GROW, State.SEEDING, "sume.webhooks.g1");

    Generation restored = G0.restoredAfter(grow);
    Generation back = ControlTopic.decode(ControlTopic.encode(restored));

    assertThat(back).isEqualTo(restored);
    assertThat(back.aborted()).isEqualTo(grow.withoutPrevious());
    assertThat(back.toRun()).isEqualTo(back);
    assertThat(back.ingressInput()).isEqualTo("sume.webhooks");
    assertThat(back.ownerPrefix()).isEmpty();
    assertThat(G0.nextNumber()).isEqualTo(1);
    assertThat(back.nextNumber()).isEqualTo(2);
    assertThat(back.describe()).contains("generation 1 was aborted");
  }

  @Test
  void aRecordWrittenBeforeAbortsExistedReadsWithoutOne() {
    String json =
        "{\"generation\":1,\"state\":\"ACTIVE\",\"kind\":\"REBUILD\","
            + "\"base_application_id\":\"a\",\"application_id\":\"a-g1\","
            + "\"input\":\"in\",\"partitions\":3}";

    Generation g = ControlTopic.decode(json.getBytes(StandardCharsets.UTF_8));

    assertThat(g.aborted()).isNull();
    assertThat(g.nextNumber()).isEqualTo(2);
    assertThat(new String(ControlTopic.encode(g), StandardCharsets.UTF_8))
        .doesNotContain("aborted");
  }
}
