package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.kafka.Cluster;
import java.util.Map;
import java.util.Optional;

/**
 * The check step of {@code partitions grow}: whether the grow asked for is possible from what the
 * cluster holds, and its plan, printed. It changes nothing.
 */
final class GrowCheck {
  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Steps steps;

  GrowCheck(Pipeline pipeline, Steps steps) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.steps = steps;
  }

  /**
   * Checks that growing {@code base} to {@code to} partitions is possible, and prints its plan.
   *
   * @param resumed the grow in progress, or null
   * @throws Refused if it is not
   */
  GrowPlan plan(Generation base, Generation resumed, int to) {
    steps.step("check that growing " + base.input() + " to " + to + " partitions is possible");
    int current =
        cluster
            .partitions(base.input())
            .orElseThrow(() -> new Refused("the input topic " + base.input() + " does not exist"));
    int built = builtFor(base, current);
    // Partitions added by hand: the generation stopped (D36). The grow then takes over what it
    // never decided by copying it, instead of waiting for it to drain.
    boolean repair = built != current;
    refuseImpossible(base, current, built, repair, to);
    int number = resumed != null ? resumed.number() : base.nextNumber();
    String input = Generation.grownInput(pipeline.config().pipeline(), number);
    String applicationId = Generation.applicationId(base.baseApplicationId(), number);
    boolean reuse = reusable(input, resumed, to);
    if (resumed == null && !cluster.committed(applicationId, input).isEmpty()) {
      throw new Refused("the consumer group " + applicationId + " has committed offsets already");
    }
    String seedFrom = StateTopics.runsChangelog(base.applicationId());
    if (cluster.partitions(seedFrom).isEmpty()
        && !cluster.committed(base.applicationId(), base.input()).isEmpty()) {
      // Seeding nothing would start the new generation with no run state past events the base
      // applied (G3): refused, not done in silence (D76).
      throw new Refused(
          "generation "
              + base.number()
              + " committed offsets, but its run-store changelog "
              + seedFrom
              + " no longer exists: generation "
              + number
              + " would start with no run state. Restore that topic (from a replica or a"
              + " backup), then run this again");
    }
    GrowPlan plan =
        new GrowPlan(base, current, built, repair, number, input, applicationId, reuse, seedFrom);
    print(plan, to);
    return plan;
  }

  /**
   * @throws Refused if the grow would add no partition, if {@code base} cannot be taken over, or if
   *     {@code to} is above the limit
   */
  private void refuseImpossible(Generation base, int current, int built, boolean repair, int to) {
    if (repair && to < current) {
      throw new Refused(
          base.input()
              + " has "
              + current
              + " partitions (added by hand; generation "
              + base.number()
              + " was built for "
              + built
              + "): --to must be at least "
              + current);
    }
    if (!repair && to <= current) {
      throw new Refused(
          "a grow must add partitions: "
              + base.input()
              + " has "
              + current
              + ", --to "
              + to
              + " (partitions can never be removed)");
    }
    if (repair && base.replay() != null && !rederived(base)) {
      // Its changelog would miss what it had not re-derived, and the events it had not reached
      // were emitted before: seeding from it and copying them would apply them again.
      throw new Refused(
          "generation "
              + base.number()
              + " stopped before it had re-derived its input, and partitions were added by hand"
              + " since: it cannot be taken over. Remove nothing; ask for help with its control"
              + " record (`runlane status`)");
    }
    if (to > TopicSettings.MAX_PARTITIONS) {
      throw new Refused("--to " + to + " is above " + TopicSettings.MAX_PARTITIONS);
    }
  }

  /**
   * Whether the new input exists already, empty and with {@code to} partitions, so that it is
   * reused.
   *
   * @throws Refused if it exists otherwise and no control record names it
   */
  private boolean reusable(String input, Generation resumed, int to) {
    Optional<Integer> existing = cluster.partitions(input);
    boolean reuse = false;
    if (resumed == null && existing.isPresent()) {
      // Left by an earlier run of this command that stopped before writing its record: reuse it
      // if nobody wrote to it, else refuse.
      reuse =
          existing.get() == to
              && Cluster.total(cluster.endOffsets(input, existing.get()).values()) == 0;
      if (!reuse) {
        throw new Refused(
            "topic "
                + input
                + " exists already, holds records or another partition count, and no control"
                + " record names it: delete it, or use the TOPIC_CONTROL that names it");
      }
    }
    return reuse;
  }

  /** Ends the check step with what it found, and prints the plan. */
  private void print(GrowPlan plan, int to) {
    Generation base = plan.base();
    steps.done(
        base.input()
            + " has "
            + plan.current()
            + " partitions"
            + (plan.repair()
                ? "; generation " + base.number() + " was built for " + plan.built() + ": repairing"
                : ""));
    steps.detail(
        "plan: create "
            + plan.input()
            + " ("
            + to
            + " partitions), move the ingress to it, "
            + (plan.repair()
                ? "copy what generation " + base.number() + " never decided into it"
                : "let generation " + base.number() + " drain " + base.input())
            + ", seed generation "
            + plan.number()
            + " ("
            + plan.applicationId()
            + ") from "
            + plan.seedFrom()
            + ", then start it");
  }

  /**
   * The partition count the generation's state was built for: the one it recorded, else its
   * run-store changelog's, else (it never ran) the input's.
   */
  private int builtFor(Generation base, int current) {
    if (base.partitions() > 0) {
      return base.partitions();
    }
    return cluster.partitions(StateTopics.runsChangelog(base.applicationId())).orElse(current);
  }

  /** Whether a replaying generation has committed up to where the one before it stopped. */
  private boolean rederived(Generation base) {
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    return base.replay().liveFrom().entrySet().stream()
        .allMatch(e -> committed.getOrDefault(e.getKey(), 0L) >= e.getValue());
  }
}
