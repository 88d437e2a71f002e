package dev.runlane.processor.generation;

import dev.runlane.common.generation.Generation;
import dev.runlane.processor.topology.StoreNames;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Checks that a generation's input has the partition count its state was built for: the one the
 * generation recorded, else (generation 0) its run-store changelog's. Partitions added outside
 * {@code runlane partitions grow} fail it (D36).
 */
public final class InputCheck {
  private InputCheck() {}

  /**
   * @throws InputChangedException if the input's partition count differs from the state's
   * @throws KafkaException if the brokers cannot be asked
   */
  public static void verify(Admin admin, Generation generation, Duration timeout) {
    OptionalInt actual = partitions(admin, generation.input(), timeout);
    if (actual.isEmpty()) {
      throw new InputChangedException(
          "input topic "
              + generation.input()
              + " of "
              + generation.describe()
              + " does not exist; it was deleted, or TOPIC_CONTROL points at another cluster's"
              + " control records",
          true);
    }
    String changelog = StoreNames.changelog(generation.applicationId(), StoreNames.RUNS);
    int expected;
    String what;
    if (generation.partitions() > 0) {
      expected = generation.partitions();
      what = "generation " + generation.number() + " was made for " + expected;
    } else {
      OptionalInt state = partitions(admin, changelog, timeout);
      if (state.isEmpty()) {
        return; // no state yet: Streams creates the changelogs to match
      }
      expected = state.getAsInt();
      what = "its run state (" + changelog + ") has " + expected;
    }
    if (actual.getAsInt() != expected) {
      throw new InputChangedException(
          "input topic "
              + generation.input()
              + " has "
              + actual.getAsInt()
              + " partitions but "
              + what
              + ": partitions were added outside `runlane partitions grow`, so runs moved away"
              + " from their state and per-run order cannot be kept. The processor stops instead"
              + " of looping on Streams' 'invalid partitions' error. Run `runlane partitions grow"
              + " --to "
              + actual.getAsInt()
              + "` to move to a new generation that takes over (docs/operations.md, 'Partitions"
              + " added by hand').");
    }
  }

  private static OptionalInt partitions(Admin admin, String topic, Duration timeout) {
    try {
      Map<String, TopicDescription> d =
          admin
              .describeTopics(
                  List.of(topic), new DescribeTopicsOptions().timeoutMs((int) timeout.toMillis()))
              .allTopicNames()
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return OptionalInt.of(d.get(topic).partitions().size());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return OptionalInt.empty();
      }
      throw new KafkaException("could not describe topic " + topic, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted describing " + topic, e);
    } catch (TimeoutException e) {
      throw new KafkaException("could not describe topic " + topic + " within " + timeout, e);
    }
  }
}
