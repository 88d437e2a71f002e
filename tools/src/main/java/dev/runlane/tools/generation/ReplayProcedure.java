package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import dev.runlane.tools.kafka.Cluster;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code replay rebuild} and {@code replay reprocess --from T}: a new generation on the same input
 * with a fresh application id, whose run store is re-derived from the input's first offset (and the
 * generation's seeds, if it was seeded), and which knows, per partition, where the generation
 * before it stopped (D35).
 *
 * <ol>
 *   <li>the processors of the current generation are asked to stop (a PREPARING record), and the
 *       tool waits until its group is empty and no transaction of it is open;
 *   <li>where it stopped is read: its committed offsets, and the events still parked undecided in
 *       its pending store (never emitted, so decided as new);
 *   <li>the new generation is seeded like the old one, and activated with those ranges: the
 *       processors re-derive everything below them without output (a rebuild), or emit what comes
 *       after T once more with the {@code runlane.replay} header (a reprocess).
 * </ol>
 */
public final class ReplayProcedure {

  /**
   * @param from a reprocess from this time, or null for a rebuild
   * @param dryRun check and print the plan, change nothing
   * @param timeout for each wait
   * @param waitForReplay wait until the new generation has re-derived up to where the old one
   *     stopped
   */
  public record Options(Instant from, boolean dryRun, Duration timeout, boolean waitForReplay) {}

  /**
   * What a replay did.
   *
   * @param generation the new generation (with dry-run: the current one)
   * @param rederived input records below where the old generation stopped
   * @param seconds how long the new generation took to re-derive them (0 without waiting)
   */
  public record Result(Generation generation, long rederived, double seconds) {}

  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Steps steps;
  private final Clock clock;

  public ReplayProcedure(Pipeline pipeline, Steps steps, Clock clock) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.steps = steps;
    this.clock = clock;
  }

  /**
   * @return what it did
   * @throws Refused if a precondition does not hold (nothing changed)
   * @throws TimedOut if a wait ran out
   */
  public Result run(Options given) {
    Options o = toTheMillisecond(given);
    Kind kind = o.from() == null ? Kind.REBUILD : Kind.REPROCESS;
    String what = kind == Kind.REBUILD ? "rebuild" : "reprocess from " + o.from();
    Start start = readGeneration(kind);
    Plan plan = checkPossible(start, o, kind, what);
    if (o.dryRun()) {
      steps.summary("dry run: nothing changed");
      return new Result(plan.base(), 0, 0);
    }

    pipeline.takeOver(start.latest());
    Instant createdAt = start.resumed() != null ? start.resumed().createdAt() : clock.instant();
    stopBase(plan, createdAt);
    Replay replay = readWhereBaseStopped(plan, o);
    if (plan.base().seedFrom() != null) {
      seedRunStore(plan);
    }
    Generation active = activate(plan, createdAt, replay);
    long toDo = Cluster.total(replay.liveFrom().values());
    double seconds = o.waitForReplay() ? awaitReplay(plan, o, replay, toDo) : 0;
    steps.summary(what + ": generation " + plan.number() + " is active");
    return new Result(active, toDo, seconds);
  }

  /**
   * What the control topic says: the generation to replay, or a replay in progress to resume.
   *
   * @param latest the latest control record
   * @param base the generation to replay
   * @param resumed the replay in progress, or null
   */
  private record Start(Generation latest, Generation base, Generation resumed) {}

  /**
   * What a replay does, once checked.
   *
   * @param kind rebuild or reprocess
   * @param base the generation replayed
   * @param partitions its input's partition count
   * @param number the new generation's number
   * @param applicationId the new generation's application id
   */
  private record Plan(
      Kind kind, Generation base, int partitions, int number, String applicationId) {}

  /** Record timestamps are milliseconds: a finer --from would name no offset more precisely. */
  private static Options toTheMillisecond(Options given) {
    return given.from() == null
        ? given
        : new Options(
            given.from().truncatedTo(ChronoUnit.MILLIS),
            given.dryRun(),
            given.timeout(),
            given.waitForReplay());
  }

  /** Reads the pipeline's generation from the control topic. */
  private Start readGeneration(Kind kind) {
    steps.step("read the pipeline's generation from " + pipeline.config().controlTopic());
    Generation latest = pipeline.latest();
    if (latest.state() == State.PREPARING) {
      if (latest.kind() != kind || latest.previous() == null) {
        throw new Refused(
            latest.describe()
                + " is being prepared: finish it first by re-running the command that started it,"
                + " or cancel it with `runlane "
                + (latest.kind() == Kind.GROW ? "partitions grow --abort" : "replay abort")
                + "`");
      }
      steps.done("resuming " + latest.describe());
      return new Start(latest, latest.previous(), latest);
    }
    steps.done(latest.describe());
    return new Start(latest, latest, null);
  }

  /** Checks that the replay keeps the guarantees, and prints its plan. */
  private Plan checkPossible(Start start, Options o, Kind kind, String what) {
    Generation base = start.base();
    Generation resumed = start.resumed();
    steps.step("check that a " + what + " of generation " + base.number() + " keeps G1-G4");
    int partitions = checkInput(base);
    if (o.from() != null) {
      checkFrom(base, o.from());
    }
    if (base.seedFrom() != null && cluster.partitions(base.seedFrom()).isEmpty()) {
      throw new Refused(
          "generation "
              + base.number()
              + " was seeded from "
              + base.seedFrom()
              + ", which no longer exists: its runs' history before the seed is gone");
    }
    int number = resumed != null ? resumed.number() : base.nextNumber();
    String applicationId = Generation.applicationId(base.baseApplicationId(), number);
    if (resumed == null && !cluster.committed(applicationId, base.input()).isEmpty()) {
      throw new Refused(
          "the consumer group "
              + applicationId
              + " has committed offsets already: a generation with this application id ran"
              + " before; nothing changed");
    }
    steps.done(
        base.input()
            + " holds every event since generation "
            + base.number()
            + " began ("
            + partitions
            + " partitions, all from offset 0)");
    steps.detail(
        "plan: stop generation "
            + base.number()
            + " ("
            + base.applicationId()
            + "), read where it stopped, start generation "
            + number
            + " ("
            + applicationId
            + ") on "
            + base.input()
            + (base.seedFrom() != null ? ", seeded from " + base.seedFrom() : "")
            + (o.from() == null
                ? "; it re-derives every run without emitting anything again"
                : "; it re-derives every run and emits the events after "
                    + o.from()
                    + " once more, marked "
                    + Replay.HEADER));
    return new Plan(kind, base, partitions, number, applicationId);
  }

  /** Asks the base generation's processors to stop: the PREPARING record. */
  private void stopBase(Plan plan, Instant createdAt) {
    Generation base = plan.base();
    Generation preparing =
        new Generation(
            plan.number(),
            State.PREPARING,
            plan.kind(),
            base.baseApplicationId(),
            plan.applicationId(),
            base.input(),
            plan.partitions(),
            base.seedFrom(),
            null,
            createdAt,
            base);
    steps.step("ask the processors of generation " + base.number() + " to stop");
    pipeline.write(preparing);
    steps.done("control record written: " + preparing.describe());
  }

  /**
   * Waits until the base generation has stopped and stays stopped, then reads where it stopped. If
   * it does not stop, it is made active again and the replay refused.
   */
  private Replay readWhereBaseStopped(Plan plan, Options o) {
    Generation base = plan.base();
    int partitions = plan.partitions();
    int number = plan.number();
    steps.step(
        "wait until the consumer group "
            + base.applicationId()
            + " is empty and its offsets stay put for "
            + Steps.format(Stopped.STABLE));
    Replay replay;
    try {
      new Stopped(pipeline, steps).await(base, o.timeout());
      steps.done("no member, no open transaction, offsets unchanged");
      steps.step("read where generation " + base.number() + " stopped");
      replay = new StopPoint(pipeline, base, partitions).replay(number, o.from());
      // A processor that joined after the check would have moved the offsets: read again.
      if (!replay.liveFrom().equals(new StopPoint(pipeline, base, partitions).liveFrom())) {
        throw new TimedOut("generation " + base.number() + " committed again after it stopped");
      }
    } catch (TimedOut e) {
      pipeline.write(base);
      throw new Refused(
          "generation "
              + base.number()
              + " did not stay stopped within "
              + Steps.format(o.timeout())
              + " ("
              + e.getMessage()
              + "): a processor that does not follow "
              + pipeline.config().controlTopic()
              + " must be stopped by hand. Generation "
              + base.number()
              + " is active again (its processors resume within a second); nothing else"
              + " changed");
    }
    long silent = Cluster.total(replay.markedFrom().values());
    long marked = Cluster.distance(replay.markedFrom(), replay.liveFrom());
    long parked = replay.parked().values().stream().mapToLong(List::size).sum();
    steps.done(
        silent
            + " events to re-derive silently, "
            + marked
            + " to emit again marked, "
            + parked
            + " parked undecided (decided as new)");
    return replay;
  }

  /** Seeds the new generation's run store from the base's seed. */
  private void seedRunStore(Plan plan) {
    Generation base = plan.base();
    steps.step("seed generation " + plan.number() + "'s run store from " + base.seedFrom());
    long seeds = Seeds.copy(pipeline, base.seedFrom(), plan.applicationId(), plan.partitions());
    steps.done(seeds + " records copied");
  }

  /** Activates the new generation with the replay's ranges: the ACTIVE record. */
  private Generation activate(Plan plan, Instant createdAt, Replay replay) {
    Generation base = plan.base();
    int number = plan.number();
    Generation active =
        new Generation(
            number,
            State.ACTIVE,
            plan.kind(),
            base.baseApplicationId(),
            plan.applicationId(),
            base.input(),
            plan.partitions(),
            base.seedFrom(),
            replay,
            createdAt,
            base);
    steps.step("activate generation " + number);
    pipeline.write(active);
    steps.done(active.describe());
    steps.action(
        "processors that follow the control topic start generation "
            + number
            + " within a second; start any that are stopped");
    return active;
  }

  /**
   * Waits until the new generation has re-derived up to where the base stopped.
   *
   * @return how long it took, in seconds
   */
  private double awaitReplay(Plan plan, Options o, Replay replay, long toDo) {
    Generation base = plan.base();
    int number = plan.number();
    String applicationId = plan.applicationId();
    steps.step(
        "wait until generation "
            + number
            + " has re-derived up to where "
            + base.number()
            + " stopped");
    long began = System.nanoTime();
    Waits.until(
        steps,
        o.timeout(),
        () -> caughtUp(applicationId, base.input(), replay.liveFrom()),
        () ->
            Cluster.total(cluster.committed(applicationId, base.input()).values())
                + " of "
                + toDo
                + " events re-derived",
        () ->
            "generation "
                + number
                + " has not re-derived its input within "
                + Steps.format(o.timeout())
                + ": are its processors running? It goes on by itself once they are;"
                + " `runlane status` shows its progress. Do not re-run: that would start another"
                + " generation");
    double seconds = (System.nanoTime() - began) / 1e9;
    steps.done(
        String.format(
            Locale.ROOT,
            "%d events in %.1f s (%.0f events/s)",
            toDo,
            seconds,
            toDo / Math.max(seconds, 1e-3)));
    return seconds;
  }

  /**
   * The input must hold every event since the generation began: a rebuild from a truncated input
   * would lose the runs' history.
   *
   * @return the input's partition count
   */
  private int checkInput(Generation base) {
    int partitions =
        cluster
            .partitions(base.input())
            .orElseThrow(() -> new Refused("the input topic " + base.input() + " does not exist"));
    int built =
        base.partitions() > 0
            ? base.partitions()
            : cluster
                .partitions(StateTopics.runsChangelog(base.applicationId()))
                .orElse(partitions);
    if (built != partitions) {
      throw new Refused(
          base.input()
              + " has "
              + partitions
              + " partitions, but generation "
              + base.number()
              + "'s state was built for "
              + built
              + ": partitions were added by hand. Run `runlane partitions grow --to "
              + partitions
              + "` first (docs/operations.md)");
    }
    List<String> truncated = new ArrayList<>();
    cluster
        .startOffsets(base.input(), partitions)
        .forEach(
            (p, start) -> {
              if (start > 0) {
                truncated.add(p + "@" + start);
              }
            });
    if (!truncated.isEmpty()) {
      throw new Refused(
          "retention deleted events of "
              + base.input()
              + " (partition@first retained offset: "
              + String.join(", ", truncated)
              + "): re-deriving from what is left would lose those runs' history. Replays need"
              + " the input retained since the generation began (retention.ms=-1, see"
              + " docs/operations.md)");
    }
    return partitions;
  }

  private void checkFrom(Generation base, Instant from) {
    if (from.isAfter(clock.instant())) {
      throw new Refused("--from " + from + " is in the future");
    }
    if (base.seedFrom() != null && base.createdAt() != null && from.isBefore(base.createdAt())) {
      throw new Refused(
          "--from "
              + from
              + " is before generation "
              + base.number()
              + " began ("
              + base.createdAt()
              + "): its events before then are in "
              + (base.previous() == null ? "an earlier input" : base.previous().input())
              + ", which this generation only knows as seeds");
    }
  }

  private boolean caughtUp(String group, String topic, Map<Integer, Long> liveFrom) {
    Map<Integer, Long> committed = cluster.committed(group, topic);
    return liveFrom.entrySet().stream()
        .allMatch(e -> e.getValue() == 0 || committed.getOrDefault(e.getKey(), 0L) >= e.getValue());
  }
}
