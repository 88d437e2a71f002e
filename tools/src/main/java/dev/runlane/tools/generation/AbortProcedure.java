package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import dev.runlane.tools.kafka.Cluster;
import dev.runlane.tools.kafka.CopyBack;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code replay abort} and {@code partitions grow --abort}: a generation still PREPARING (or, for a
 * grow, SEEDING) is cancelled and the generation it was made from is active again, so that no
 * command leaves the pipeline stopped with no way back (D76).
 *
 * <p>Nothing of the cancelled generation ran: processors run a generation only once it is ACTIVE.
 * The one made active again starts from its own committed offsets and stores, as after a restart,
 * so it neither applies anything twice nor misses anything of its input. What a cancelled grow's
 * ingress wrote to the grow's input is copied back into that input, exactly once: one copy before
 * the ingress moves back, a second once the grow's input is quiet. The cancelled number is never
 * used again (its topics may be left behind).
 */
public final class AbortProcedure {
  /**
   * How long a cancelled grow's input must receive nothing once the ingress moved back, unless
   * {@code --quiet-seconds} says otherwise: above the ingress's switch (2 s) and its ack timeout,
   * so that no produce in flight lands after the last copy (D76).
   */
  static final Duration DEFAULT_QUIET = Duration.ofSeconds(10);

  /**
   * @param grow {@code partitions grow --abort}, else {@code replay abort}
   * @param quiet how long the grow's input must receive nothing once the ingress moved back; zero
   *     for {@link #DEFAULT_QUIET}
   * @param timeout for each wait
   */
  public record Options(boolean grow, Duration quiet, Duration timeout) {}

  /**
   * What an abort did.
   *
   * @param restored the generation active again
   * @param copiedBack events copied back from the grow's input
   */
  public record Result(Generation restored, long copiedBack) {}

  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Steps steps;

  public AbortProcedure(Pipeline pipeline, Steps steps) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.steps = steps;
  }

  /**
   * @throws Refused if nothing can be aborted, or restoring would break a guarantee
   * @throws TimedOut if the grow's input does not go quiet (re-run to resume the copy)
   */
  public Result run(Options o) {
    String command = o.grow() ? "partitions grow --abort" : "replay abort";
    steps.step("read the pipeline's generation from " + pipeline.config().controlTopic());
    Generation latest = pipeline.latest();
    steps.done(latest.describe());
    if (o.grow()
        && latest.state() == State.ACTIVE
        && latest.aborted() != null
        && latest.aborted().kind() == Kind.GROW) {
      // Made active again by an earlier run, which may have stopped before its copy was done:
      // resume it (the copy goes on from where it committed).
      long copied = copyBackOnceQuiet(latest.aborted(), latest, o);
      steps.summary(
          command
              + ": generation "
              + latest.aborted().number()
              + " was cancelled already; "
              + copied
              + " more events copied back to "
              + latest.input());
      return new Result(latest, copied);
    }
    Generation cancelled = inProgress(latest, o.grow(), command);
    Generation base = cancelled.previous();
    checkRestorable(base, cancelled);

    pipeline.takeOver(latest);
    long copied = o.grow() ? copyBack(cancelled, base) : 0;
    Generation restored = base.restoredAfter(cancelled);
    steps.step("make generation " + base.number() + " active again");
    // The grow's copy may have listed the old input as retired: it is written to again (D71).
    pipeline.write(pipeline.retired().without(base.input()));
    pipeline.write(restored);
    steps.done("control record written: " + restored.describe());
    steps.action(
        "every ingress writes to "
            + base.input()
            + " and the processors that follow the control topic run generation "
            + base.number()
            + " within a second; start any that are stopped");
    if (o.grow()) {
      copied += copyBackOnceQuiet(cancelled, restored, o);
    }
    steps.summary(
        command
            + ": generation "
            + cancelled.number()
            + " cancelled, generation "
            + base.number()
            + " is active again"
            + (o.grow() ? "; " + copied + " events copied back to " + base.input() : ""));
    return new Result(restored, copied);
  }

  /**
   * The generation the command may cancel.
   *
   * @throws Refused naming why there is none
   */
  private static Generation inProgress(Generation latest, boolean grow, String command) {
    String what = grow ? "grow" : "replay";
    if (latest.state() == State.ACTIVE) {
      throw new Refused(
          "no "
              + what
              + " is in progress: "
              + latest.describe()
              + (latest.kind() == Kind.INITIAL || latest.aborted() != null
                  ? ""
                  : grow
                      ? ". An active generation cannot be aborted: its processors may have"
                          + " decided events of its input, which the generation before it never"
                          + " reads; grow again instead"
                      : ". An active replay cannot be aborted: its processors may have emitted"
                          + " events the generation before it had not, which it would decide and"
                          + " emit once more; replay again instead"));
    }
    if ((latest.kind() == Kind.GROW) != grow || latest.previous() == null) {
      throw new Refused(
          latest.describe()
              + " is being prepared by another command: cancel it with `runlane "
              + (latest.kind() == Kind.GROW ? "partitions grow --abort" : "replay abort")
              + "`, not `"
              + command
              + "`");
    }
    return latest;
  }

  /**
   * Refuses where running {@code base} again would break a guarantee.
   *
   * @throws Refused saying why
   */
  private void checkRestorable(Generation base, Generation cancelled) {
    steps.step("check that generation " + base.number() + " can run again");
    int partitions =
        cluster
            .partitions(base.input())
            .orElseThrow(
                () ->
                    new Refused(
                        "the input topic "
                            + base.input()
                            + " of generation "
                            + base.number()
                            + " no longer exists: it cannot run again"));
    String changelog = StateTopics.runsChangelog(base.applicationId());
    int built =
        base.partitions() > 0
            ? base.partitions()
            : cluster.partitions(changelog).orElse(partitions);
    if (built != partitions) {
      throw new Refused(
          base.input()
              + " has "
              + partitions
              + " partitions, but generation "
              + base.number()
              + "'s state was built for "
              + built
              + ": partitions were added by hand, so its processors cannot run it again (D36)."
              + " Finish the grow instead: `runlane partitions grow --to "
              + Math.max(partitions, cancelled.partitions())
              + "`");
    }
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    if (!committed.isEmpty() && cluster.partitions(changelog).isEmpty()) {
      throw new Refused(
          "generation "
              + base.number()
              + "'s run-store changelog "
              + changelog
              + " no longer exists: its processors would start with no run state past events"
              + " they committed, and decide the next ones against nothing (G3). Restore that"
              + " topic (from a replica or a backup), then run this again");
    }
    steps.done(
        base.describe()
            + (committed.isEmpty()
                ? " (never committed: it starts from its input's first offset)"
                : " resumes from its committed offsets and run store"));
  }

  /** Copies what the ingress wrote to the cancelled grow's input back, while it still writes. */
  private long copyBack(Generation cancelled, Generation base) {
    steps.step("copy what the ingress wrote to " + cancelled.input() + " into " + base.input());
    long copied =
        CopyBack.pass(
            pipeline.clientSettings(), cancelled.input(), base.input(), copyId(cancelled));
    steps.done(copied + " events copied");
    return copied;
  }

  /** Once the cancelled grow's input is quiet, copies what reached it meanwhile. */
  private long copyBackOnceQuiet(Generation cancelled, Generation restored, Options o) {
    steps.step(
        "wait until "
            + cancelled.input()
            + " receives nothing for "
            + Steps.format(o.quiet().isZero() ? DEFAULT_QUIET : o.quiet()));
    awaitQuiet(cancelled.input(), o);
    steps.done("quiet");
    return copyBack(cancelled, restored);
  }

  private String copyId(Generation cancelled) {
    return pipeline.config().pipeline() + "/g" + cancelled.number();
  }

  private void awaitQuiet(String topic, Options o) {
    Duration quiet = o.quiet().isZero() ? DEFAULT_QUIET : o.quiet();
    int partitions = cluster.partitions(topic).orElse(0);
    long deadline = System.nanoTime() + o.timeout().toNanos();
    Map<Integer, Long> last = cluster.endOffsets(topic, partitions);
    long quietSince = System.nanoTime();
    while (System.nanoTime() - quietSince < quiet.toNanos()) {
      if (System.nanoTime() - deadline > 0) {
        throw new TimedOut(
            topic
                + " still receives writes after "
                + Steps.format(o.timeout())
                + ": an ingress that does not follow the control topic writes to it; upgrade or"
                + " stop it, then re-run this command to finish the copy");
      }
      LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
      Map<Integer, Long> now = cluster.endOffsets(topic, partitions);
      if (!now.equals(last)) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
  }
}
