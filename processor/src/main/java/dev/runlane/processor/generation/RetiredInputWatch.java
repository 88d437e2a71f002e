package dev.runlane.processor.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts records written to the input a grow retired after the grow copied it (D71): the grow marks
 * what it copied with the stopped generation's committed offsets, so whatever lies past them was
 * acked by an ingress that did not follow the move (another {@code TOPIC_CONTROL}, or frozen past
 * every bound) and is read by nobody until {@code runlane partitions grow} is run again. The count
 * is the gauge {@code runlane_processor_retired_input_unread_records}; a count seen twice in a row
 * is also one WARN line naming the command.
 */
public final class RetiredInputWatch {
  private static final Logger log = LoggerFactory.getLogger(RetiredInputWatch.class);

  /** How often the retired input is looked at. */
  static final Duration EVERY = Duration.ofSeconds(10);

  private static final Duration READ_WITHIN = Duration.ofSeconds(10);

  private final Admin admin;
  private final AtomicLong unread = new AtomicLong();
  private long nextCheck = System.nanoTime();
  private long previous; // the count of the check before
  private long warned; // the count last logged

  public RetiredInputWatch(Admin admin, MeterRegistry registry) {
    this.admin = admin;
    Gauge.builder("runlane.processor.retired.input.unread.records", unread, AtomicLong::get)
        .description(
            "Records written to the input a grow retired after the grow copied it: run `runlane"
                + " partitions grow --to <partitions>` again to copy them")
        .register(registry);
  }

  /** Looks at the input {@code running} retired, at most every {@link #EVERY}. */
  void check(Generation running) {
    long now = System.nanoTime();
    if (now - nextCheck < 0) {
      return;
    }
    nextCheck = now + EVERY.toNanos();
    Generation base = running.previous();
    if (running.kind() != Kind.GROW || base == null || base.input().equals(running.input())) {
      unread.set(0);
      return;
    }
    try {
      long late = late(base);
      unread.set(late);
      if (late > 0 && previous > 0 && late != warned) {
        log.warn(
            "{} records were written to {}, the input generation {} retired, after the grow copied"
                + " it (an ingress with another TOPIC_CONTROL?): nobody reads them; run `runlane"
                + " partitions grow --to {}` again to copy them into {}",
            late,
            base.input(),
            running.number(),
            running.partitions(),
            running.input());
        warned = late;
      }
      previous = late;
    } catch (RuntimeException e) {
      log.debug("could not look at the retired input {}: {}", base.input(), e.toString());
    }
  }

  /** Records of {@code base}'s input past its group's committed offsets. */
  private long late(Generation base) {
    Map<TopicPartition, OffsetAndMetadata> committed =
        await(admin.listConsumerGroupOffsets(base.applicationId()).partitionsToOffsetAndMetadata());
    List<TopicPartition> partitions =
        await(admin.describeTopics(List.of(base.input())).allTopicNames())
            .get(base.input())
            .partitions()
            .stream()
            .map(p -> new TopicPartition(base.input(), p.partition()))
            .toList();
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    partitions.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
    Map<TopicPartition, ListOffsetsResultInfo> end = await(admin.listOffsets(latest).all());
    long late = 0;
    for (TopicPartition tp : partitions) {
      OffsetAndMetadata c = committed.get(tp);
      late += Math.max(0, end.get(tp).offset() - (c == null ? 0 : c.offset()));
    }
    return late;
  }

  private static <T> T await(KafkaFuture<T> future) {
    try {
      return future.get(READ_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(e);
    }
  }
}
