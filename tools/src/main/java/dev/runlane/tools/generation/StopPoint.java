package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.tools.kafka.Changelogs;
import dev.runlane.tools.kafka.Cluster;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where a stopped generation left its input, as the replay after it needs it (D35): read from its
 * committed offsets, its input's end, its pending and held changelogs, and its own replay if it was
 * one.
 */
final class StopPoint {
  private final Pipeline pipeline;
  private final Cluster cluster;
  private final Generation base;
  private final int partitions;

  StopPoint(Pipeline pipeline, Generation base, int partitions) {
    this.pipeline = pipeline;
    this.cluster = pipeline.cluster();
    this.base = base;
    this.partitions = partitions;
  }

  /**
   * Per partition, the first offset no generation so far committed: the stopped generation's
   * committed offset, or, if it was itself replaying and had not caught up, its own replay's.
   */
  Map<Integer, Long> liveFrom() {
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    Replay before = base.replay();
    Map<Integer, Long> liveFrom = new TreeMap<>();
    for (int p = 0; p < partitions; p++) {
      long earlier = before == null ? 0 : before.liveFrom().getOrDefault(p, 0L);
      liveFrom.put(p, Math.max(committed.getOrDefault(p, 0L), earlier));
    }
    return liveFrom;
  }

  /**
   * The replay of generation {@code number} (a reprocess from {@code from}, or a rebuild if null):
   * below {@code live_from} what some generation emitted, except the offsets none decided for good
   * ({@code parked}: parked in the stopped generation's pending store or held by its reorder
   * window, or never emitted by those before it and not reached by it), and of those the ones a
   * reorder window held ({@code held}, D90); up to {@code claim_from} what it may have read.
   */
  Replay replay(int number, Instant from) {
    Map<Integer, Long> committed = cluster.committed(base.applicationId(), base.input());
    Map<Integer, Long> liveFrom = liveFrom();
    Map<Integer, Long> end = cluster.endOffsets(base.input(), partitions);
    Replay before = base.replay();
    // Held events count as parked: decided, but never emitted, they are decided again as new,
    // on the run store alone, since their Redis markers say done (D46).
    Map<Integer, List<Long>> pending =
        Changelogs.undecided(pipeline.clientSettings(), base.applicationId());
    Map<Integer, List<Long>> heldNow =
        Changelogs.parked(
            pipeline.clientSettings(), StateTopics.heldChangelog(base.applicationId()));
    Map<Integer, List<Long>> parked = new TreeMap<>();
    Map<Integer, List<Long>> held = new TreeMap<>();
    Map<Integer, Long> claimFrom = new TreeMap<>();
    for (int p = 0; p < partitions; p++) {
      long reached = committed.getOrDefault(p, 0L);
      long live = liveFrom.get(p);
      TreeSet<Long> undecided = new TreeSet<>();
      TreeSet<Long> heldHere = new TreeSet<>();
      // Held by this generation's window, or by an earlier one's and parked here since (D90).
      Set<Long> heldBy = new HashSet<>(heldNow.getOrDefault(p, List.of()));
      if (before != null) {
        heldBy.addAll(before.held().getOrDefault(p, List.of()));
      }
      for (long o : pending.getOrDefault(p, List.of())) {
        if (o < live && (before == null || !before.emittedBefore(p, o))) {
          undecided.add(o); // parked by the stopped generation, emitted by none before it
          if (heldBy.contains(o)) {
            heldHere.add(o); // decided against the head of that moment (D90)
          }
        }
      }
      if (before != null) {
        for (long o : before.parked().getOrDefault(p, List.of())) {
          if (o >= reached && o < live) {
            undecided.add(o); // undecided before it, and it did not get that far
            if (heldBy.contains(o)) {
              heldHere.add(o);
            }
          }
        }
      }
      if (!undecided.isEmpty()) {
        parked.put(p, List.copyOf(undecided));
      }
      if (!heldHere.isEmpty()) {
        held.put(p, List.copyOf(heldHere));
      }
      long earlierClaim = before == null ? 0 : before.claimFrom().getOrDefault(p, 0L);
      claimFrom.put(p, Math.max(live, Math.max(end.get(p), earlierClaim)));
    }
    Map<Integer, Long> markedFrom = new TreeMap<>(liveFrom);
    String id = "rebuild-g" + number;
    if (from != null) {
      cluster
          .offsetsAt(base.input(), partitions, from)
          .forEach((p, at) -> markedFrom.put(p, Math.min(at, liveFrom.get(p))));
      id = "reprocess-g" + number + "-" + from;
    }
    return new Replay(id, from, markedFrom, liveFrom, claimFrom, parked, held);
  }
}
