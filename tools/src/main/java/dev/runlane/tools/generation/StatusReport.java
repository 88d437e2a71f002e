package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.tools.kafka.Cluster;
import java.io.PrintStream;
import java.util.Map;

/** {@code status}: the latest generation, which one the processors run, its members and lag. */
public final class StatusReport {
  private StatusReport() {}

  public static void print(Pipeline pipeline, PrintStream out) {
    Cluster cluster = pipeline.cluster();
    Generation latest = pipeline.latest();
    out.println("pipeline " + pipeline.config().pipeline() + ": " + latest.describe());
    Generation running = latest.toRun();
    if (running == null) {
      out.println("processors: none run while the replay is prepared");
      return;
    }
    out.println("processors run " + running.describe());
    int partitions = cluster.partitions(running.input()).orElse(0);
    Map<Integer, Long> end = cluster.endOffsets(running.input(), partitions);
    Map<Integer, Long> committed = cluster.committed(running.applicationId(), running.input());
    out.println(
        "  group "
            + running.applicationId()
            + ": "
            + cluster.members(running.applicationId())
            + " members, "
            + Cluster.distance(committed, end)
            + " events behind "
            + running.input()
            + " ("
            + partitions
            + " partitions)");
    Replay replay = running.replay();
    if (replay != null) {
      long toDo = Cluster.total(replay.liveFrom().values());
      long done = 0;
      for (Map.Entry<Integer, Long> e : replay.liveFrom().entrySet()) {
        done += Math.min(e.getValue(), committed.getOrDefault(e.getKey(), 0L));
      }
      out.println("  replay " + replay.id() + ": " + done + " of " + toDo + " events re-derived");
    }
  }
}
