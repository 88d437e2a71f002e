package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.generation.RetiredInputs;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.kafka.Cluster;
import dev.runlane.tools.kafka.InputCopy;
import java.util.Map;
import java.util.OptionalInt;

/**
 * {@code partitions catch-up}: copies what was written to inputs that grows retired, after they
 * were copied, into the active input (D71). Such a record was answered 200 by an ingress that did
 * not follow the move (another {@code TOPIC_CONTROL}, or one frozen past every bound); no
 * generation ever read it, so it is copied without the store-alone header and decided as a live
 * event (Redis, then the run store). Each input's mark moves to where its copy ended.
 */
public final class CatchUpProcedure {
  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Steps steps;

  public CatchUpProcedure(Pipeline pipeline, Steps steps) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.steps = steps;
  }

  /**
   * @param dryRun count, copy nothing
   * @return the records copied (counted, in a dry run)
   * @throws Refused while a grow or replay is in progress
   */
  public long run(boolean dryRun) {
    steps.step("read the pipeline's generation from " + pipeline.config().controlTopic());
    Generation latest = pipeline.latest();
    if (latest.state() != State.ACTIVE) {
      throw new Refused(
          latest.describe()
              + " is being prepared: finish it first by re-running the command that started it,"
              + " then run this one");
    }
    if (!dryRun) {
      pipeline.takeOver(latest);
    }
    RetiredInputs retired = pipeline.retired();
    steps.done(latest.describe() + "; " + retired.inputs().size() + " retired inputs");
    long total = 0;
    for (RetiredInputs.Retired r : retired.inputs()) {
      if (!r.input().equals(latest.input())) { // never the input in use (a cancelled grow's base)
        total += catchUp(r, latest, dryRun);
      }
    }
    steps.summary(
        total
            + " events "
            + (dryRun ? "to copy (dry run: nothing changed)" : "copied into " + latest.input()));
    return total;
  }

  private long catchUp(RetiredInputs.Retired r, Generation latest, boolean dryRun) {
    steps.step(
        "look for webhooks written to "
            + r.input()
            + " after generation "
            + r.generation()
            + " retired it");
    int partitions = cluster.partitions(r.input()).orElse(0);
    long late = partitions == 0 ? 0 : r.late(cluster.endOffsets(r.input(), partitions));
    if (late == 0 || dryRun) {
      steps.done(late + " events");
      return late;
    }
    InputCopy.Copied c =
        InputCopy.tail(
            pipeline.clientSettings(),
            r.input(),
            partitions,
            r.copiedTo(),
            Map.of(),
            latest.input(),
            OptionalInt.empty());
    pipeline.write(
        pipeline.retired().with(new RetiredInputs.Retired(r.input(), r.generation(), c.upTo())));
    steps.done(
        c.records()
            + " events copied into "
            + latest.input()
            + " (an ingress wrote them after the move: check every ingress's TOPIC_CONTROL)");
    return c.records();
  }
}
