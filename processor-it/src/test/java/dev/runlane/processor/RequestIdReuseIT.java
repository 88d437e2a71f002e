package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * A request id names one event of one run (D41): a copy naming another run is dead-lettered as
 * {@code request_id_reused}, never applied to that run, whether the copy comes in a later batch of
 * the same task, in the same batch, or to another task.
 */
@RealInfra
class RequestIdReuseIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
  private static final int PARTITIONS = 3;

  @Test
  void aCopyNamingAnotherRunIsDeadLetteredHoweverItIsBatched(Infra infra) throws Exception {
    try (ProcessorHarness h =
            new ProcessorHarness(
                infra.bootstrapServers(), infra.redisUri(), infra.uniqueName("reuse"), 256);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader dlq = h.new Reader(h.topics.dlq())) {
      // Long batches, so that two copies sent back to back are decided in one batch.
      h.with("PROCESSOR_BATCH_INTERVAL_MS", "500").with("TOPIC_PARTITIONS", "" + PARTITIONS);
      h.start();
      String runA = "run-a";
      String samePartition = runOnPartition(partitionOf(runA), "run-b");
      String otherPartition = runOnPartition((partitionOf(runA) + 1) % PARTITIONS, "run-c");

      h.send(runA, "later-batch", T0);
      h.send(runA, "other-task", T0);
      // Both copies of this one are in the same batch: the first, on run A, takes the id.
      h.sendAsync(runA, "same-batch", T0.plusSeconds(1), "");
      h.sendAsync(samePartition, "same-batch", T0.plusSeconds(1), "");
      h.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> h.count("applied", "store") == 3);

      // The same task decides this copy in a later batch; before D41 it read done-by-this-task,
      // found no head for its run and was applied again.
      h.send(samePartition, "later-batch", T0.plusSeconds(2));
      // Another task: before D41 a done marker of another task made it a silent duplicate.
      h.send(otherPartition, "other-task", T0.plusSeconds(2));

      await().atMost(Duration.ofSeconds(60)).until(() -> dlq.poll().size() >= 3);
      h.send(runA, "last", T0.plusSeconds(3)); // once applied, everything before it is out
      await().atMost(Duration.ofSeconds(60)).until(() -> events.poll().size() >= 4);
      assertThat(events.caughtUp()).isTrue();

      assertThat(events.records.stream().map(ConsumerRecord::key)).containsOnly(runA);
      assertThat(events.requestIds())
          .containsExactlyInAnyOrder("later-batch", "other-task", "same-batch", "last");
      Map<String, String> reused =
          dlq.poll().stream()
              .collect(
                  Collectors.toMap(
                      r -> ProcessorHarness.header(r, RecordHeaders.REQUEST_ID),
                      r -> r.key() + " " + ProcessorHarness.header(r, RecordHeaders.DLQ_REASON)));
      assertThat(reused)
          .containsOnly(
              Map.entry("later-batch", samePartition + " request_id_reused"),
              Map.entry("same-batch", samePartition + " request_id_reused"),
              Map.entry("other-task", otherPartition + " request_id_reused"));
      assertThat(h.count("reused", "redis")).isEqualTo(3);
      assertThat(runStatesOf(h)).containsOnlyKeys(runA);
    }
  }

  private static Map<String, List<String>> runStatesOf(ProcessorHarness h) throws Exception {
    try (ProcessorHarness.Reader runs = h.new Reader(h.topics.runs())) {
      await().atMost(Duration.ofSeconds(30)).until(runs::caughtUp);
      return runs.records.stream()
          .collect(
              Collectors.groupingBy(
                  ConsumerRecord::key,
                  Collectors.mapping(
                      r -> new String(r.value(), StandardCharsets.UTF_8), Collectors.toList())));
    }
  }

  /** Kafka's default partitioner for a keyed record. */
  private static int partitionOf(String key) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
  }

  private static String runOnPartition(int partition, String prefix) {
    for (int i = 0; ; i++) {
      if (partitionOf(prefix + "-" + i) == partition) {
        return prefix + "-" + i;
      }
    }
  }
}
