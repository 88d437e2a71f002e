package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.generation.StateTopics;
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
   * @param quiet how long the old input must receive nothing after every ingress acknowledged the
   *     new one (0: no such wait; for ingresses that predate the acknowledgements, D71)
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
    Start start = readGeneration(o);
    if (start.grown()) {
      return new Result(
          start.latest(), RetiredInput.catchUp(pipeline, steps, start.latest()), Duration.ZERO);
    }
    GrowPlan plan = new GrowCheck(pipeline, steps).plan(start.base(), start.resumed(), o.to());
    if (o.dryRun()) {
      steps.summary("dry run: nothing changed");
      return new Result(plan.base(), 0, Duration.ZERO);
    }

    pipeline.takeOver(start.latest());
    Generation preparing = start.resumed();
    if (preparing == null) {
      createInput(plan, o);
      preparing = moveIngress(plan, o);
    }
    long pauseBegan = System.nanoTime();
    if (preparing.state() == State.PREPARING) {
      preparing = stopBase(plan, preparing, o);
    }
    awaitBaseStopped(plan, o);
    InputCopy.Copied copied = copyLeftovers(plan);
    long seeds = seedRunStore(plan, o);
    Generation active = startGeneration(plan, preparing);
    RetiredInput.markCopied(cluster, plan.base(), copied.upTo());
    Duration pause = awaitProcessing(plan, o, pauseBegan);
    steps.summary(
        "grow to "
            + o.to()
            + " partitions: generation "
            + plan.number()
            + " is active on "
            + plan.input());
    return new Result(active, seeds, pause);
  }

  /**
   * What the control topic says: the generation to grow, a grow in progress to resume, or one
   * already done.
   *
   * @param latest the latest control record
   * @param base the generation to grow
   * @param resumed the grow in progress, or null
   * @param grown the grow asked for is done already: nothing to do
   */
  private record Start(Generation latest, Generation base, Generation resumed, boolean grown) {}

  /** Reads the pipeline's generation from the control topic. */
  private Start readGeneration(Options o) {
    steps.step("read the pipeline's generation from " + pipeline.config().controlTopic());
    Generation latest = pipeline.latest();
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
      steps.done("resuming " + latest.describe());
      return new Start(latest, latest.previous(), latest, false);
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
      return new Start(latest, latest, null, true);
    }
    steps.done(latest.describe());
    return new Start(latest, latest, null, false);
  }

  /** Creates the new input with the old one's topic configs (or reuse an empty one). */
  private void createInput(GrowPlan plan, Options o) {
    Generation base = plan.base();
    steps.step("create " + plan.input() + " with " + o.to() + " partitions");
    if (!plan.reuse()) {
      cluster.create(
          plan.input(),
          o.to(),
          pipeline.config().topicSettings().replicationFactor(),
          cluster.topicConfigs(base.input()));
    }
    steps.done(
        (plan.reuse() ? "reused (empty, left by an earlier run)" : "created")
            + ", with "
            + base.input()
            + "'s topic configs");
  }

  /** The PREPARING record moves every ingress to the new input. */
  private Generation moveIngress(GrowPlan plan, Options o) {
    Generation base = plan.base();
    Generation preparing =
        new Generation(
            plan.number(),
            State.PREPARING,
            Kind.GROW,
            base.baseApplicationId(),
            plan.applicationId(),
            plan.input(),
            o.to(),
            plan.seedFrom(),
            null,
            clock.instant(),
            base);
    steps.step("move the ingress to " + plan.input());
    pipeline.write(preparing);
    steps.done("control record written: " + preparing.describe());
    steps.action(
        "every ingress follows the control topic and writes to "
            + plan.input()
            + " within a few seconds; events written there wait for generation "
            + plan.number());
    return preparing;
  }

  /**
   * Once every ingress acknowledged the new input (and, unless repairing, the old one is fully
   * decided), the SEEDING record stops the base generation.
   */
  private Generation stopBase(GrowPlan plan, Generation preparing, Options o) {
    Generation base = plan.base();
    steps.step("wait until every ingress writes to " + plan.input() + " and nothing else");
    try (IngressAcks acks = new IngressAcks(pipeline, steps, clock)) {
      acks.await(plan.number(), plan.input(), o.timeout());
    }
    if (!o.quiet().isZero()) {
      steps.step("wait until " + base.input() + " receives nothing for " + Steps.format(o.quiet()));
      awaitQuiet(base.input(), plan.current(), o);
      steps.done("quiet");
    }
    if (!plan.repair()) {
      awaitDrained(base, plan.current(), o);
    }
    Generation seeding = preparing.withState(State.SEEDING);
    steps.step("stop generation " + base.number() + " to seed from its state");
    pipeline.write(seeding);
    steps.done("control record written: " + seeding.describe());
    return seeding;
  }

  /** Waits until the base generation's processors are stopped. */
  private void awaitBaseStopped(GrowPlan plan, Options o) {
    Generation base = plan.base();
    steps.step(
        "wait until the processors of generation "
            + base.number()
            + " are stopped"
            + (plan.repair()
                ? " (they stop by themselves when partitions are added by hand)"
                : ""));
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
              + plan.input()
              + " is paused meanwhile (the ingress writes there already): stop those processors"
              + " by hand, then re-run this command to resume");
    }
    steps.done("no member, no open transaction, offsets unchanged");
  }

  /** Copies what the base generation did not decide for good into the new input. */
  private InputCopy.Copied copyLeftovers(GrowPlan plan) {
    Generation base = plan.base();
    steps.step(
        "copy what generation " + base.number() + " did not decide for good into " + plan.input());
    InputCopy.Copied copied = copyUndecided(base, plan.current(), plan.input(), plan.number());
    steps.done(
        copied.records()
            + " events copied"
            + (plan.repair() ? "" : " (0 unless something arrived late)"));
    return copied;
  }

  /** Seeds the new generation's run store from the base's run-store changelog. */
  private long seedRunStore(GrowPlan plan, Options o) {
    steps.step("seed generation " + plan.number() + "'s run store from " + plan.seedFrom());
    long seeds =
        cluster.partitions(plan.seedFrom()).isPresent()
            ? Seeds.copy(pipeline, plan.seedFrom(), plan.applicationId(), o.to())
            : 0;
    steps.done(seeds + " records copied");
    return seeds;
  }

  /** The ACTIVE record starts the new generation. */
  private Generation startGeneration(GrowPlan plan, Generation preparing) {
    Generation active = preparing.withState(State.ACTIVE);
    steps.step("start generation " + plan.number());
    pipeline.write(active);
    steps.done(active.describe());
    return active;
  }

  /** Waits until the new generation processes its input; returns the processing pause. */
  private Duration awaitProcessing(GrowPlan plan, Options o, long pauseBegan) {
    steps.step("wait until generation " + plan.number() + " processes " + plan.input());
    Waits.until(
        steps,
        o.timeout(),
        () -> started(plan.applicationId(), plan.input(), o.to()),
        () -> "waiting for the first commit of " + plan.applicationId(),
        () ->
            "generation "
                + plan.number()
                + " is active but has not committed within "
                + Steps.format(o.timeout())
                + ": are the processors running? It starts by itself once they are; `runlane"
                + " status` shows it");
    Duration pause = Duration.ofNanos(System.nanoTime() - pauseBegan);
    steps.done(
        "processing; events written to " + plan.input() + " waited at most " + Steps.format(pause));
    return pause;
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
   * What the stopped generation did not decide for good (from each partition's committed offset,
   * and what was parked undecided below it; with a replay of its own, also what it had not
   * re-derived yet) goes into the new input, with the header that has it decided on the run store
   * alone (D35). After a drain that is nothing; in a repair, the events of partitions added by
   * hand: they land behind what the ingress wrote since it moved, so one older than an event of its
   * run that arrived meanwhile is listed stale.
   */
  private InputCopy.Copied copyUndecided(
      Generation base, int partitions, String input, int number) {
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
