package dev.runlane.processor.topology;

import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;

/** The settings and Streams properties the topology's tests build their pieces with. */
final class TestTopology {
  static final TopicNames TOPICS = TopicNames.defaults();

  private TestTopology() {}

  /** Generation 0 in batches of 256 every 50 ms, degrading when Redis fails. */
  static TopologySettings settings(RedisFailureMode mode, int maxBodyBytes) {
    return new TopologySettings(
        TOPICS, 256, Duration.ofMillis(50), mode, Duration.ofSeconds(1), maxBodyBytes);
  }

  /** {@link #settings} with the given batches and a reorder window of {@code window}. */
  static TopologySettings windowed(int batchSize, Duration batchInterval, Duration window) {
    return new TopologySettings(
        TOPICS,
        batchSize,
        batchInterval,
        RedisFailureMode.DEGRADE,
        Duration.ofSeconds(1),
        4096,
        "",
        null,
        window,
        ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
        TopologySettings.DEFAULT_DECIDED_HORIZON);
  }

  /**
   * Generation {@code number} replaying with {@code replay}, in batches of 256 every 20 ms, with a
   * reorder window of {@code window}.
   */
  static TopologySettings replaying(int number, Replay replay, Duration window) {
    return new TopologySettings(
        TOPICS,
        256,
        Duration.ofMillis(20),
        RedisFailureMode.DEGRADE,
        Duration.ofSeconds(1),
        4096,
        "g" + number + "/",
        replay,
        window,
        ProcessorConfig.DEFAULT_REORDER_MAX_HELD,
        TopologySettings.DEFAULT_DECIDED_HORIZON);
  }

  /** Properties for a test driver or a mock context: nothing connects to the broker named. */
  static Properties streamsProperties(String applicationId) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    return props;
  }

  /** A mock context of task 0_{@code partition}, its state in {@code stateDir}. */
  static MockProcessorContext<String, byte[]> context(
      String applicationId, int partition, Path stateDir) {
    return new MockProcessorContext<>(
        streamsProperties(applicationId), new TaskId(0, partition), stateDir.toFile());
  }

  /**
   * Every store the processor uses, in memory and without changelogs, initialized in {@code
   * context} and added to it; add them to the context of a restarted task with {@link #addTo}.
   */
  static List<StateStore> stores(MockProcessorContext<String, byte[]> context) {
    List<StateStore> stores =
        List.of(
            Stores.keyValueStoreBuilder(
                    Stores.inMemoryKeyValueStore(StoreNames.RUNS),
                    Serdes.String(),
                    Serdes.ByteArray())
                .withLoggingDisabled()
                .build(),
            Stores.keyValueStoreBuilder(
                    Stores.inMemoryKeyValueStore(StoreNames.PENDING),
                    Serdes.Long(),
                    new PendingEvent.PendingEventSerde())
                .withLoggingDisabled()
                .build(),
            Stores.keyValueStoreBuilder(
                    Stores.inMemoryKeyValueStore(StoreNames.HELD),
                    Serdes.Long(),
                    new PendingEvent.PendingEventSerde())
                .withLoggingDisabled()
                .build(),
            Stores.windowStoreBuilder(
                    Stores.inMemoryWindowStore(
                        StoreNames.DECIDED,
                        TopologySettings.DEFAULT_DECIDED_HORIZON,
                        Duration.ofMillis(1),
                        false),
                    Serdes.String(),
                    Serdes.ByteArray())
                .withLoggingDisabled()
                .build());
    stores.forEach(store -> store.init(context.getStateStoreContext(), store));
    addTo(context, stores);
    return stores;
  }

  static void addTo(MockProcessorContext<String, byte[]> context, List<StateStore> stores) {
    stores.forEach(context::addStateStore);
  }
}
