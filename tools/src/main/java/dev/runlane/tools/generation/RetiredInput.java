package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.tools.Steps;
import dev.runlane.tools.kafka.Cluster;
import dev.runlane.tools.kafka.InputCopy;
import java.util.Map;

/**
 * The input a grow retired (D71). What the grow copied out of it is marked by the stopped
 * generation's committed offsets, so a record written there afterwards (by an ingress that does not
 * follow this control topic, or one frozen past every bound) shows as a record past them: the
 * processors count it ({@code runlane_processor_retired_input_unread_records}), and {@code
 * partitions grow} run again copies it into the active input.
 */
final class RetiredInput {
  private RetiredInput() {}

  /** Marks the retired input as copied up to {@code upTo}. */
  static void markCopied(Cluster cluster, Generation base, Map<Integer, Long> upTo) {
    cluster.commit(base.applicationId(), base.input(), upTo);
  }

  /**
   * Copies what was written to the input {@code grown} retired after the grow copied it, and marks
   * it copied.
   *
   * @return the records copied
   */
  static long catchUp(Pipeline pipeline, Steps steps, Generation grown) {
    Generation base = grown.previous();
    if (grown.kind() != Kind.GROW || base == null || base.input().equals(grown.input())) {
      return 0;
    }
    Cluster cluster = pipeline.cluster();
    int partitions = cluster.partitions(base.input()).orElse(0);
    if (partitions == 0) {
      return 0;
    }
    Map<Integer, Long> copied = cluster.committed(base.applicationId(), base.input());
    long late = Cluster.distance(copied, cluster.endOffsets(base.input(), partitions));
    steps.step(
        "look for webhooks written to the retired input " + base.input() + " after the grow");
    if (late == 0) {
      steps.done("none");
      return 0;
    }
    InputCopy.Copied c =
        InputCopy.tail(
            pipeline.clientSettings(),
            base.input(),
            partitions,
            copied,
            Map.of(),
            grown.input(),
            grown.number());
    markCopied(cluster, base, c.upTo());
    steps.done(
        c.records()
            + " events copied into "
            + grown.input()
            + ", decided on the run store (an ingress wrote them to the retired input: check that"
            + " every ingress has this TOPIC_CONTROL)");
    return c.records();
  }
}
