package dev.runlane.local.verify;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads what the pipeline wrote: {@code sume.events}, {@code sume.events.stale} and {@code
 * sume.runs} (and, when asked, its input) from the beginning with {@code read_committed}, until
 * every acked event shows up downstream and the processor has no lag, or the settle timeout ends.
 */
final class DownstreamReader {

  /** How long the topics must stay quiet, once everything acked was seen, before the checks. */
  private static final Duration QUIET = Duration.ofSeconds(1);

  private final PipelineVerifier.Target target;
  private final ObjectMapper json = new ObjectMapper();

  DownstreamReader(PipelineVerifier.Target target) {
    this.target = target;
  }

  /**
   * Reads until settled (at most {@code settleTimeout}); with {@code withInput}, the input topic
   * too.
   */
  Downstream read(Set<String> acked, Duration settleTimeout, boolean withInput) {
    Downstream down = new Downstream();
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            target.bootstrapServers(),
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            "read_committed",
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            false,
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
            5000);
    try (KafkaConsumer<String, byte[]> consumer =
            new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer());
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, target.bootstrapServers()))) {
      List<TopicPartition> partitions = partitions(consumer, withInput);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      pollUntilSettled(consumer, admin, partitions, acked, settleTimeout, down);
    }
    return down;
  }

  private List<TopicPartition> partitions(
      KafkaConsumer<String, byte[]> consumer, boolean withInput) {
    TopicNames t = target.topics();
    List<TopicPartition> partitions = new ArrayList<>();
    List<String> topics = new ArrayList<>(List.of(t.events(), t.stale(), t.runs()));
    if (withInput) {
      topics.add(t.webhooks());
    }
    for (String topic : topics) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
      infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
    }
    return partitions;
  }

  private void pollUntilSettled(
      KafkaConsumer<String, byte[]> consumer,
      Admin admin,
      List<TopicPartition> partitions,
      Set<String> acked,
      Duration settleTimeout,
      Downstream down) {
    long deadline = System.nanoTime() + settleTimeout.toNanos();
    long quietSince = -1;
    while (true) {
      int n = 0;
      for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        n++;
        accept(down, r);
      }
      long now = System.nanoTime();
      boolean settled =
          n == 0
              && caughtUp(consumer, partitions)
              && down.holdsAll(acked)
              && ConsumerLag.of(admin, target.applicationId(), target.topics().webhooks()) == 0;
      if (!settled) {
        quietSince = -1;
      } else if (quietSince < 0) {
        quietSince = now;
      } else if (now - quietSince >= QUIET.toNanos()) {
        break;
      }
      if (now > deadline) {
        break; // check what we have; the checks name what is missing
      }
    }
  }

  private void accept(Downstream down, ConsumerRecord<String, byte[]> r) {
    TopicNames t = target.topics();
    String requestId = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
    boolean replayed = RecordHeaders.get(r.headers(), Replay.HEADER) != null;
    if (replayed && !r.topic().equals(t.runs())) {
      // Emitted once more by a reprocess, on purpose and marked (G2's one exception): checked by
      // the test that asked for it, not counted as applied or stale twice.
      if (r.topic().equals(t.events())) {
        down.addReplayed();
      }
      return;
    }
    if (r.topic().equals(t.webhooks())) {
      down.addInput(r.partition(), r.offset(), r.timestamp(), requestId);
    } else if (r.topic().equals(t.events())) {
      down.addApplied(r.key(), requestId, r.timestamp());
    } else if (r.topic().equals(t.stale())) {
      down.addStale(
          requestId, r.timestamp(), RecordHeaders.get(r.headers(), "stale.last_request_id"));
    } else if (r.value() == null) {
      down.removeRun(r.key());
    } else {
      try {
        down.putRunState(r.key(), json.readTree(r.value()));
      } catch (IOException e) {
        throw new IllegalStateException("unreadable run state for " + r.key(), e);
      }
    }
  }

  private static boolean caughtUp(
      KafkaConsumer<String, byte[]> consumer, List<TopicPartition> partitions) {
    Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(5));
    for (TopicPartition tp : partitions) {
      if (consumer.position(tp, Duration.ofSeconds(5)) < ends.get(tp)) {
        return false;
      }
    }
    return true;
  }
}
