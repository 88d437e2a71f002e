package dev.runlane.processor.generation;

import dev.runlane.common.generation.RetiredInputs;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts records written to inputs that grows retired, after they were copied (D71): the control
 * topic keeps each retired input with the offsets up to which it was copied, so whatever lies past
 * them was answered 200 by an ingress that did not follow the move (another {@code TOPIC_CONTROL},
 * or one frozen past every bound) and is read by nobody until {@code runlane partitions catch-up}.
 * The count is the gauge {@code runlane_processor_retired_input_unread_records}, and each rise one
 * WARN line naming the command.
 */
public final class RetiredInputWatch {
  private static final Logger log = LoggerFactory.getLogger(RetiredInputWatch.class);

  /** How often the retired inputs are looked at. */
  static final Duration EVERY = Duration.ofSeconds(10);

  private static final Duration READ_WITHIN = Duration.ofSeconds(3);

  private final Admin admin;
  private final AtomicLong unread = new AtomicLong();
  private long nextCheck = System.nanoTime();
  private long warned; // the count last logged; 0 once back to none
  private boolean failing;

  public RetiredInputWatch(Admin admin, MeterRegistry registry) {
    this.admin = admin;
    Gauge.builder("runlane.processor.retired.input.unread.records", unread, AtomicLong::get)
        .description(
            "Records written to inputs that grows retired, after they were copied: run `runlane"
                + " partitions catch-up` to copy them into the active input")
        .register(registry);
  }

  /** Looks at {@code retired}, at most every {@link #EVERY}. */
  void check(RetiredInputs retired) {
    long now = System.nanoTime();
    if (now - nextCheck < 0) {
      return;
    }
    nextCheck = now + EVERY.toNanos();
    try {
      long late = 0;
      StringBuilder where = new StringBuilder();
      for (RetiredInputs.Retired r : retired.inputs()) {
        long l = r.late(endOffsets(r));
        if (l > 0) {
          late += l;
          where.append(where.isEmpty() ? "" : ", ").append(r.input()).append(": ").append(l);
        }
      }
      unread.set(late);
      if (failing) {
        log.info("the retired inputs can be looked at again");
        failing = false;
      }
      if (late > warned) {
        log.warn(
            "{} records were written to inputs that grows retired, after they were copied ({}):"
                + " nobody reads them; check every ingress's TOPIC_CONTROL, then run `runlane"
                + " partitions catch-up` to copy them into the active input",
            late,
            where);
      }
      warned = late;
    } catch (RuntimeException e) {
      if (!failing) {
        log.warn(
            "cannot look at the inputs grows retired (does this processor's principal have"
                + " Describe on them?): runlane_processor_retired_input_unread_records is not"
                + " updated until it can: {}",
            e.toString());
        failing = true;
      }
    }
  }

  /** Each marked partition's end offset; none when the topic was deleted. */
  private Map<Integer, Long> endOffsets(RetiredInputs.Retired r) {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    r.copiedTo()
        .keySet()
        .forEach(p -> latest.put(new TopicPartition(r.input(), p), OffsetSpec.latest()));
    Map<Integer, Long> end = new HashMap<>();
    try {
      Map<TopicPartition, ListOffsetsResultInfo> offsets = await(admin.listOffsets(latest).all());
      offsets.forEach((tp, info) -> end.put(tp.partition(), info.offset()));
    } catch (IllegalStateException e) {
      if (e.getCause() instanceof ExecutionException x
          && x.getCause() instanceof UnknownTopicOrPartitionException) {
        return Map.of(); // deleted: nothing there is readable any more
      }
      throw e;
    }
    return end;
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
