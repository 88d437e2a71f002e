package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import dev.runlane.tools.kafka.Changelogs;
import dev.runlane.tools.kafka.Cluster;
import dev.runlane.tools.kafka.InputCopy;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code partitions grow --to N}: a new generation on a new input topic with N partitions, while
 * Sume keeps delivering (D35).
 *
 * <ol>
 *   <li>the new input is created and named in a PREPARING record: every ingress writes to it from
 *       then on, while the current generation's processors go on draining the old input;
 *   <li>once the old input is quiet and fully decided (committed to its end, nothing parked, no
 *       open transaction), a SEEDING record stops those processors, and whatever they had not
 *       decided for good by then (normally nothing) is copied into the new input;
 *   <li>the new generation's run-store changelog is seeded with every run's state from the stopped
 *       one, repartitioned as the ingress now partitions runs;
 *   <li>the ACTIVE record starts the new generation: each task restores its runs' heads before it
 *       decides its first event, so no run's state moves backwards and no applied event is applied
 *       again (Redis catches retries across the move; the seeded heads catch them when Redis does
 *       not).
 * </ol>
 *
 * <p>On an input whose partitions were added by hand (the processors stopped, D36), the drain is
 * skipped: what the stopped generation never decided is copied instead (a repair).
 *
 * <p>Events written to the new input wait from the switch to the new generation's start: that is
 * the processing pause.
 */
public final class GrowProcedure {

  /**
   * @param to the new partition count
   * @param dryRun check and print the plan, change nothing
   * @param quiet how long the old input must receive nothing before it counts as quiet
   * @param timeout for each wait
   */
  public record Options(int to, boolean dryRun, Duration quiet, Duration timeout) {}

  /** What a finished grow measured. */
  public record Result(Generation generation, long seeds, Duration pause) {}

  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Steps steps;
  private final Clock clock;

  public GrowProcedure(Pipeline pipeline, Steps steps, Clock clock) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.steps = steps;
    this.clock = clock;
  }

  /**
   * @throws Refused if a precondition does not hold (nothing changed)
   * @throws TimedOut if a wait ran out (re-run the same command to resume)
   */
  public Result run(Options o) {
    steps.step("read the pipeline's generation from " + pipeline.config().controlTopic());
    Generation latest = pipeline.latest();
    Generation base;
    Generation resumed = null;
    if (latest.state() != State.ACTIVE) {
      if (latest.kind() != Kind.GROW || latest.previous() == null) {
        throw new Refused(
            latest.describe()
                + " is being prepared: finish it first by re-running the command that started it");
      }
      if (latest.partitions() != o.to()) {
        throw new Refused(
            "a grow to "
                + latest.partitions()
                + " partitions is in progress: re-run `partitions grow --to "
                + latest.partitions()
                + "` to finish it first");
      }
      resumed = latest;
      base = latest.previous();
      steps.done("resuming " + latest.describe());
    } else if (latest.kind() == Kind.GROW
        && latest.partitions() == o.to()
        && cluster.partitions(latest.input()).orElse(0) == o.to()) {
      steps.done(latest.describe());
      steps.summary(
          "generation "
              + latest.number()
              + " grew to "
              + o.to()
              + " partitions already; nothing to do");
      return new Result(latest, 0, Duration.ZERO);
    } else {
      base = latest;
      steps.done(base.describe());
    }

    steps.step("check that growing " + base.input() + " to " + o.to() + " partitions is possible");
    int current =
        cluster
            .partitions(base.input())
            .orElseThrow(() -> new Refused("the input topic " + base.input() + " does not exist"));
    int built = builtFor(base, current);
    // Partitions added by hand: the generation stopped (D36). The grow then takes over what it
    // never decided by copying it, instead of waiting for it to drain.
    boolean repair = built != current;
    if (repair && o.to() < current) {
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
    if (!repair && o.to() <= current) {
      throw new Refused(
          "a grow must add partitions: "
              + base.input()
              + " has "
              + current
              + ", --to "
              + o.to()
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
    if (o.to() > TopicSettings.MAX_PARTITIONS) {
      throw new Refused("--to " + o.to() + " is above " + TopicSettings.MAX_PARTITIONS);
    }
    int number = resumed != null ? resumed.number() : base.number() + 1;
    String input = Generation.grownInput(pipeline.config().pipeline(), number);
    String applicationId = Generation.applicationId(base.baseApplicationId(), number);
    Optional<Integer> existing = cluster.partitions(input);
    boolean reuse = false;
    if (resumed == null && existing.isPresent()) {
      // Left by an earlier run of this command that stopped before writing its record: reuse it
      // if nobody wrote to it, else refuse.
      reuse =
          existing.get() == o.to()
              && Cluster.total(cluster.endOffsets(input, existing.get()).values()) == 0;
      if (!reuse) {
        throw new Refused(
            "topic "
                + input
                + " exists already, holds records or another partition count, and no control"
                + " record names it: delete it, or use the TOPIC_CONTROL that names it");
      }
    }
    if (resumed == null && !cluster.committed(applicationId, input).isEmpty()) {
      throw new Refused("the consumer group " + applicationId + " has committed offsets already");
    }
    String seedFrom = StateTopics.runsChangelog(base.applicationId());
    steps.done(
        base.input()
            + " has "
            + current
            + " partitions"
            + (repair
                ? "; generation " + base.number() + " was built for " + built + ": repairing"
                : ""));
    steps.detail(
        "plan: create "
            + input
            + " ("
            + o.to()
            + " partitions), move the ingress to it, "
            + (repair
                ? "copy what generation " + base.number() + " never decided into it"
                : "let generation " + base.number() + " drain " + base.input())
            + ", seed generation "
            + number
            + " ("
            + applicationId
            + ") from "
            + seedFrom
            + ", then start it");
    if (o.dryRun()) {
      steps.summary("dry run: nothing changed");
      return new Result(base, 0, Duration.ZERO);
    }

    pipeline.takeOver(latest);
    Generation preparing = resumed;
    if (preparing == null) {
      steps.step("create " + input + " with " + o.to() + " partitions");
      if (!reuse) {
        cluster.create(
            input,
            o.to(),
            pipeline.config().topicSettings().replicationFactor(),
            cluster.topicConfigs(base.input()));
      }
      steps.done(
          (reuse ? "reused (empty, left by an earlier run)" : "created")
              + ", with "
              + base.input()
              + "'s topic configs");
      preparing =
          new Generation(
              number,
              State.PREPARING,
              Kind.GROW,
              base.baseApplicationId(),
              applicationId,
              input,
              o.to(),
              seedFrom,
              null,
              clock.instant(),
              base);
      steps.step("move the ingress to " + input);
      pipeline.write(preparing);
      steps.done("control record written: " + preparing.describe());
      steps.action(
          "every ingress follows the control topic and writes to "
              + input
              + " within a few seconds; events written there wait for generation "
              + number);
    }
    long pauseBegan = System.nanoTime();

    if (preparing.state() == State.PREPARING) {
      steps.step("wait until " + base.input() + " receives nothing for " + Steps.format(o.quiet()));
      awaitQuiet(base.input(), current, o);
      steps.done("quiet");
      if (!repair) {
        awaitDrained(base, current, o);
      }
      preparing = preparing.withState(State.SEEDING);
      steps.step("stop generation " + base.number() + " to seed from its state");
      pipeline.write(preparing);
      steps.done("control record written: " + preparing.describe());
    }

    steps.step(
        "wait until the processors of generation "
            + base.number()
            + " are stopped"
            + (repair ? " (they stop by themselves when partitions are added by hand)" : ""));
    try {
      new Stopped(pipeline, steps).await(base, o.timeout());
    } catch (TimedOut e) {
      throw new TimedOut(
          "generation "
              + base.number()
              + " did not stop within "
              + Steps.format(o.timeout())
              + " ("
              + e.getMessage()
              + "). Processing of "
              + input
              + " is paused meanwhile (the ingress writes there already): stop those processors"
              + " by hand, then re-run this command to resume");
    }
    steps.done("no member, no open transaction, offsets unchanged");

    steps.step("copy what generation " + base.number() + " did not decide for good into " + input);
    long copied = copyUndecided(base, current, input, number);
    steps.done(copied + " events copied" + (repair ? "" : " (0 unless something arrived late)"));

    steps.step("seed generation " + number + "'s run store from " + seedFrom);
    long seeds =
        cluster.partitions(seedFrom).isPresent()
            ? Seeds.copy(pipeline, seedFrom, applicationId, o.to())
            : 0;
    steps.done(seeds + " records copied");

    Generation active = preparing.withState(State.ACTIVE);
    steps.step("start generation " + number);
    pipeline.write(active);
    steps.done(active.describe());

    steps.step("wait until generation " + number + " processes " + input);
    Waits.until(
        steps,
        o.timeout(),
        () -> started(applicationId, input, o.to()),
        () -> "waiting for the first commit of " + applicationId,
        () ->
            "generation "
                + number
                + " is active but has not committed within "
                + Steps.format(o.timeout())
                + ": are the processors running? It starts by itself once they are; `runlane"
                + " status` shows it");
    Duration pause = Duration.ofNanos(System.nanoTime() - pauseBegan);
    steps.done("processing; events written to " + input + " waited at most " + Steps.format(pause));
    steps.summary(
        "grow to " + o.to() + " partitions: generation " + number + " is active on " + input);
    return new Result(active, seeds, pause);
  }

  private void awaitDrained(Generation base, int partitions, Options o) {
    steps.step(
        "wait until generation " + base.number() + " has decided everything in " + base.input());
    Waits.until(
        steps,
        o.timeout(),
        () -> drained(base, partitions),
        () -> lag(base, partitions) + " events not committed yet",
        () ->
            "generation "
                + base.number()
                + " has not finished "
                + base.input()
                + " within "
                + Steps.format(o.timeout())
                + " ("
                + lag(base, partitions)
                + " events behind): are its processors running? Re-run this command to resume");
    steps.done("committed to the end, nothing parked");
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

  /**
   * What the stopped generation did not decide for good (from each partition's committed offset,
   * and what was parked undecided below it; with a replay of its own, also what it had not
   * re-derived yet) goes into the new input, with the header that has it decided on the run store
   * alone (D35). After a drain that is nothing; in a repair, the events of partitions added by
   * hand: they land behind what the ingress wrote since it moved, so one older than an event of its
   * run that arrived meanwhile is listed stale.
   */
  private long copyUndecided(Generation base, int partitions, String input, int number) {
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    Map<Integer, List<Long>> parked = undecided(base);
    return InputCopy.tail(
        pipeline.clientSettings(), base.input(), partitions, committed, parked, input, number);
  }

  private void awaitQuiet(String topic, int partitions, Options o) {
    long deadline = System.nanoTime() + o.timeout().toNanos();
    Map<Integer, Long> last = cluster.endOffsets(topic, partitions);
    long quietSince = System.nanoTime();
    while (System.nanoTime() - quietSince < o.quiet().toNanos()) {
      if (System.nanoTime() - deadline > 0) {
        throw new TimedOut(
            topic
                + " still receives writes after "
                + Steps.format(o.timeout())
                + ": an ingress that does not follow the control topic writes to it; upgrade or"
                + " stop it, then re-run this command");
      }
      LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
      Map<Integer, Long> now = cluster.endOffsets(topic, partitions);
      if (!now.equals(last)) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
  }

  /** Whether a replaying generation has committed up to where the one before it stopped. */
  private boolean rederived(Generation base) {
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    return base.replay().liveFrom().entrySet().stream()
        .allMatch(e -> committed.getOrDefault(e.getKey(), 0L) >= e.getValue());
  }

  private long lag(Generation base, int partitions) {
    return Cluster.distance(
        cluster.committed(base.applicationId(), base.input()),
        cluster.endOffsets(base.input(), partitions));
  }

  private boolean drained(Generation base, int partitions) {
    return lag(base, partitions) == 0
        && !cluster.openTransactions(StateTopics.runsChangelog(base.applicationId()))
        && !cluster.openTransactions(StateTopics.pendingChangelog(base.applicationId()))
        && !cluster.openTransactions(StateTopics.heldChangelog(base.applicationId()))
        && undecided(base).values().stream().allMatch(List::isEmpty);
  }

  /** What the generation read but has not applied: parked and held events (D46). */
  private Map<Integer, List<Long>> undecided(Generation base) {
    return Changelogs.undecided(pipeline.clientSettings(), base.applicationId());
  }

  private boolean started(String group, String topic, int partitions) {
    if (Cluster.total(cluster.endOffsets(topic, partitions).values()) == 0) {
      return cluster.members(group) > 0;
    }
    return Cluster.total(cluster.committed(group, topic).values()) > 0;
  }
}
