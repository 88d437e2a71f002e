package dev.runlane.common.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** The control record's encoding: a generation of any size in records a topic accepts (D75). */
class ControlTopicTest {
  /** What a topic and a producer accept by default: {@code max.request.size}. */
  private static final int ONE_RECORD_LIMIT = 1_048_576;

  private static final Generation G0 = Generation.initial("app", "sume.webhooks");

  @Test
  void aReplayHolding200000EventsIsWrittenInPartsEachWithinOneRecordAndReadBackWhole() {
    Generation active = replayHolding(24, 200_000 / 24 + 1);
    assertThat(ControlTopic.encode(active).length).isGreaterThan(ONE_RECORD_LIMIT);

    List<ProducerRecord<String, byte[]>> records =
        ControlTopic.records("runlane.control", "sume.webhooks", active);

    assertThat(records).hasSizeGreaterThan(1);
    for (ProducerRecord<String, byte[]> r : records) {
      assertThat(r.value().length + r.key().length() + 200).isLessThan(ONE_RECORD_LIMIT);
    }
    assertThat(readBack("sume.webhooks", records)).isEqualTo(active);
  }

  @Test
  void aSmallGenerationIsOneRecordAsBefore() {
    Generation g = replayHolding(3, 10);

    List<ProducerRecord<String, byte[]>> records =
        ControlTopic.records("runlane.control", "sume.webhooks", g);

    assertThat(records).hasSize(1);
    assertThat(records.get(0).key()).isEqualTo("sume.webhooks");
    assertThat(records.get(0).value()).isEqualTo(ControlTopic.encode(g));
    assertThat(records.get(0).headers().toArray()).isEmpty();
    assertThat(readBack("sume.webhooks", records)).isEqualTo(g);
  }

  @Test
  void anotherPipelinesPartsAndRecordsAreSkipped() {
    Generation big = replayHolding(24, 10_000);
    Generation small = replayHolding(3, 10);
    List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
    records.addAll(ControlTopic.records("c", "sume.webhooks", small));
    records.addAll(ControlTopic.records("c", "other.webhooks", big));

    assertThat(readBack("sume.webhooks", records)).isEqualTo(small);
    assertThat(readBack("other.webhooks", records)).isEqualTo(big);
  }

  @Test
  void aNewerWriteReplacesTheOlderOnesParts() {
    Generation first = replayHolding(24, 10_000);
    Generation second = replayHolding(24, 9_000);
    List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
    records.addAll(ControlTopic.records("c", "sume.webhooks", first));
    records.addAll(ControlTopic.records("c", "sume.webhooks", second));

    assertThat(readBack("sume.webhooks", records)).isEqualTo(second);
  }

  @Test
  void aRecordWhosePartsWereNotReadIsNotTakenForAnother() {
    List<ProducerRecord<String, byte[]>> records =
        new ArrayList<>(ControlTopic.records("c", "sume.webhooks", replayHolding(24, 10_000)));
    records.remove(0); // compacted away behind a newer part, say

    assertThatThrownBy(() -> readBack("sume.webhooks", records))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("part 0 is missing");
  }

  private static Generation readBack(String pipeline, List<ProducerRecord<String, byte[]>> in) {
    ControlTopic.Assembler a = new ControlTopic.Assembler(pipeline);
    in.forEach(r -> a.accept(r.key(), r.value(), r.headers()));
    return a.latest().orElseThrow();
  }

  /** An active rebuild whose stopped generation held every other offset up to 2 * held. */
  private static Generation replayHolding(int partitions, int heldPerPartition) {
    Map<Integer, Long> live = new HashMap<>();
    Map<Integer, List<Long>> parked = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      long base = 1_000_000_000L;
      live.put(p, base + 2L * heldPerPartition);
      List<Long> offsets = new ArrayList<>();
      for (int i = 0; i < heldPerPartition; i++) {
        offsets.add(base + 2L * i);
      }
      parked.put(p, offsets);
    }
    Replay replay = new Replay("rebuild-g1", null, live, live, live, parked);
    return new Generation(
        1,
        State.ACTIVE,
        Kind.REBUILD,
        "app",
        "app-g1",
        "sume.webhooks",
        partitions,
        null,
        replay,
        Instant.parse("2026-12-01T10:00:00Z"),
        G0);
  }
}
