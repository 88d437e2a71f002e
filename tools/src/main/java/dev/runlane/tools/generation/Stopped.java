package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import dev.runlane.tools.kafka.Cluster;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiting until a generation's processors are stopped for good: no member in its group, no open
 * transaction in its changelogs, and its committed offsets unchanged for {@link #STABLE}. The
 * window covers a processor that read the control topic just before it changed and is still
 * joining: the processors follow it once a second (D35).
 */
final class Stopped {
  static final Duration STABLE = Duration.ofSeconds(3);
  private static final Duration POLL = Duration.ofMillis(500);

  private final Cluster cluster;
  private final Steps steps;

  Stopped(Pipeline pipeline, Steps steps) {
    this.cluster = pipeline.cluster();
    this.steps = steps;
  }

  /**
   * @throws TimedOut naming what still runs, if not stopped for good within {@code timeout}
   */
  void await(Generation g, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long stableSince = -1;
    Map<Integer, Long> offsets = null;
    long nextProgress = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (true) {
      String running = whatRuns(g);
      Map<Integer, Long> now = cluster.committed(g.applicationId(), g.input());
      if (running != null || stableSince < 0 || !now.equals(offsets)) {
        stableSince = running == null ? System.nanoTime() : -1;
        offsets = now;
      } else if (System.nanoTime() - stableSince >= STABLE.toNanos()) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new TimedOut(running != null ? running : "its committed offsets still move");
      }
      if (System.nanoTime() - nextProgress > 0 && running != null) {
        steps.detail(running);
        nextProgress = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }

  /** What keeps the generation from counting as stopped, or null. */
  private String whatRuns(Generation g) {
    int members = cluster.members(g.applicationId());
    if (members > 0) {
      return members + " members in the consumer group " + g.applicationId();
    }
    for (String changelog :
        new String[] {
          StateTopics.pendingChangelog(g.applicationId()),
          StateTopics.heldChangelog(g.applicationId()),
          StateTopics.runsChangelog(g.applicationId())
        }) {
      if (cluster.openTransactions(changelog)) {
        return "an open transaction in " + changelog;
      }
    }
    return null;
  }
}
