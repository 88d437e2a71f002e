package dev.runlane.local.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InjectionPlanTest {

  private static final Instant EPOCH = Instant.parse("2026-11-29T10:00:00Z");
  private static final int N = 20_000;

  private static List<EventPlan> take(InjectionPlan plan, int n) {
    List<EventPlan> plans = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      plans.add(plan.next());
    }
    return plans;
  }

  private static InjectionPlan realistic(long seed) {
    return new InjectionPlan(seed, Injection.realistic(), 20, 3, 8, EPOCH);
  }

  @Test
  void sameSeedGivesTheSameStream() {
    assertThat(take(realistic(7), 500)).isEqualTo(take(realistic(7), 500));
    assertThat(take(realistic(7), 500)).isNotEqualTo(take(realistic(8), 500));
  }

  @Test
  void requestIdsAreUniqueAndCreatedAtIncreasesWithinARun() {
    List<EventPlan> plans = take(realistic(1), N);
    assertThat(plans.stream().map(p -> p.event().requestId()).distinct().count())
        .isEqualTo(plans.size());
    for (List<SimulatedEvent> run : byRun(plans).values()) {
      List<SimulatedEvent> bySeq =
          run.stream().sorted(Comparator.comparingInt(SimulatedEvent::seq)).toList();
      for (int i = 1; i < bySeq.size(); i++) {
        assertThat(bySeq.get(i).isNewerThan(bySeq.get(i - 1))).isTrue();
      }
    }
  }

  @Test
  void reorderedEventsAreExactlyThoseSentAfterANewerOne() {
    List<EventPlan> plans = take(realistic(2), N);
    Map<String, SimulatedEvent> newestSent = new LinkedHashMap<>();
    long reordered = 0;
    for (EventPlan p : plans) {
      SimulatedEvent newest = newestSent.get(p.event().runId());
      boolean afterNewer = newest != null && newest.isNewerThan(p.event());
      assertThat(p.reordered()).as(p.toString()).isEqualTo(afterNewer);
      if (newest == null || p.event().isNewerThan(newest)) {
        newestSent.put(p.event().runId(), p.event());
      }
      reordered += p.reordered() ? 1 : 0;
    }
    assertThat(reordered).isPositive();
  }

  @Test
  void injectionSharesAreRoughlyAsConfigured() {
    List<EventPlan> plans = take(realistic(3), N);
    double concurrent = share(plans, p -> p.concurrentCopies() > 1);
    double redelivered = share(plans, p -> !p.redeliveryDelays().isEmpty());
    double slow = share(plans, EventPlan::slowFirstAttempt);
    assertThat(concurrent).isCloseTo(0.05, within(0.01));
    assertThat(redelivered).isCloseTo(0.10, within(0.015));
    assertThat(slow).isCloseTo(0.05, within(0.01));
    assertThat(plans)
        .allSatisfy(
            p -> {
              assertThat(p.concurrentCopies()).isBetween(1, 4);
              assertThat(p.redeliveryDelays()).hasSizeLessThanOrEqualTo(2);
              assertThat(p.redeliveryDelays())
                  .allSatisfy(
                      d -> assertThat(d).isBetween(Duration.ofSeconds(1), Duration.ofMinutes(10)));
            });
  }

  @Test
  void noneInjectsNothing() {
    List<EventPlan> plans = take(new InjectionPlan(4, Injection.none(), 20, 3, 8, EPOCH), 5_000);
    assertThat(plans)
        .allSatisfy(
            p -> {
              assertThat(p.concurrentCopies()).isEqualTo(1);
              assertThat(p.redeliveryDelays()).isEmpty();
              assertThat(p.slowFirstAttempt()).isFalse();
              assertThat(p.reordered()).isFalse();
            });
  }

  @Test
  void runsInterleave() {
    List<EventPlan> plans = take(realistic(5), 100);
    long switches = 0;
    for (int i = 1; i < plans.size(); i++) {
      if (!plans.get(i).event().runId().equals(plans.get(i - 1).event().runId())) {
        switches++;
      }
    }
    assertThat(switches).isGreaterThan(50);
  }

  private static double share(List<EventPlan> plans, java.util.function.Predicate<EventPlan> p) {
    return plans.stream().filter(p).count() / (double) plans.size();
  }

  private static Map<String, List<SimulatedEvent>> byRun(List<EventPlan> plans) {
    Map<String, List<SimulatedEvent>> runs = new LinkedHashMap<>();
    plans.forEach(
        p -> runs.computeIfAbsent(p.event().runId(), k -> new ArrayList<>()).add(p.event()));
    return runs;
  }
}
