package dev.runlane.processor.topology;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.processor.dedup.Dedup;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;

/** Builds the processor's topology; a pure function of its settings and collaborators. */
public final class ProcessorTopology {
  static final String SOURCE = "webhooks-source";
  static final String PROCESSOR = "run-events";
  static final String EVENTS_SINK = "events-sink";
  static final String STALE_SINK = "stale-sink";
  static final String RUNS_SINK = "runs-sink";
  static final String DLQ_SINK = "dlq-sink";
  static final String DECISIONS_SINK = "decisions-sink";

  /**
   * Tombstones of decided pending events are replayed on restore until compaction drops them: keep
   * them for a minute, not the default day, so a restore stays short (design.md §6.1).
   */
  static final Map<String, String> PENDING_CHANGELOG =
      Map.of(
          "cleanup.policy", "compact",
          "delete.retention.ms", "60000",
          "segment.ms", "600000",
          "min.cleanable.dirty.ratio", "0.1");

  private ProcessorTopology() {}

  public static Topology build(TopologySettings settings, Dedup dedup, ProcessorMetrics metrics) {
    return build(
        settings,
        dedup,
        metrics,
        EnvelopeParser.withDefaults(),
        FaultHook.NONE,
        RedisBudget.unbounded());
  }

  /** A topology that never restarts with held events: TopologyTestDriver tests. */
  public static Topology build(
      TopologySettings settings,
      Dedup dedup,
      ProcessorMetrics metrics,
      EnvelopeParser parser,
      FaultHook faultHook,
      RedisBudget redisBudget) {
    return build(settings, dedup, metrics, parser, faultHook, redisBudget, InputReader.NONE);
  }

  /**
   * The processor's topology.
   *
   * @param inputReader reads held events' bodies back from the input when a task starts (D49)
   */
  public static Topology build(
      TopologySettings settings,
      Dedup dedup,
      ProcessorMetrics metrics,
      EnvelopeParser parser,
      FaultHook faultHook,
      RedisBudget redisBudget,
      InputReader inputReader) {
    TopicNames topics = settings.topics();
    Topology topology = new Topology();
    FailedAttempts failures = new FailedAttempts();
    SharedRoundTrips roundTrips = new SharedRoundTrips(dedup);
    topology.addSource(
        SOURCE, new Utf8Keys(), Serdes.ByteArray().deserializer(), topics.webhooks());
    topology.addProcessor(
        PROCESSOR,
        () ->
            new RunEventProcessor(
                settings,
                parser,
                dedup,
                metrics,
                faultHook,
                failures,
                redisBudget,
                roundTrips,
                inputReader),
        SOURCE);
    topology.addStateStore(runStore(), PROCESSOR);
    topology.addStateStore(pendingStore(), PROCESSOR);
    topology.addStateStore(heldStore(), PROCESSOR);
    if (settings.recordsDecided()) {
      topology.addStateStore(decidedStore(settings), PROCESSOR);
    }
    addSink(topology, EVENTS_SINK, topics.events());
    addSink(topology, STALE_SINK, topics.stale());
    addSink(topology, RUNS_SINK, topics.runs());
    addSink(topology, DLQ_SINK, topics.dlq());
    if (settings.logsDecisions()) {
      // Off, there is no sink at all: the log then costs nothing (D86).
      addSink(topology, DECISIONS_SINK, settings.decisionsTopic());
    }
    return topology;
  }

  /**
   * The run store, uncached. Its working set (every active run) would fill the thread's cache, and
   * the cache evicts from the store being written, so each parked event's body went to the pending
   * changelog before it was decided. The pending store alone keeps the cache, where a put and a
   * delete between two commits leave one tombstone (D20).
   *
   * <p>It holds the run state's JSON bytes, not the object: the processor encodes each new state
   * once for the store, its changelog and sume.runs, and /runs/{id} answers with the stored bytes.
   */
  private static StoreBuilder<KeyValueStore<String, byte[]>> runStore() {
    return Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(StoreNames.RUNS), Serdes.String(), Serdes.ByteArray())
        .withCachingDisabled()
        .withLoggingEnabled(Map.of());
  }

  /**
   * The record of decided ids (D68): kept for the horizon, in segments dropped whole, uncached like
   * the run store it completes. A window of one millisecond: an entry is an id at its arrival.
   */
  private static StoreBuilder<WindowStore<String, byte[]>> decidedStore(TopologySettings settings) {
    return Stores.windowStoreBuilder(
            Stores.persistentWindowStore(
                StoreNames.DECIDED, settings.decidedHorizon(), Duration.ofMillis(1), false),
            Serdes.String(),
            Serdes.ByteArray())
        .withCachingDisabled()
        .withLoggingEnabled(Map.of());
  }

  /** Parked events, cached (see {@link #runStore()}), with a short-lived changelog (§6.1). */
  private static StoreBuilder<KeyValueStore<Long, PendingEvent>> pendingStore() {
    return Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore(StoreNames.PENDING),
            Serdes.Long(),
            new PendingEvent.PendingEventSerde())
        .withCachingEnabled()
        .withLoggingEnabled(PENDING_CHANGELOG);
  }

  /**
   * Held events are decided ones waiting for their reorder window (D46), changelogged so that they
   * are exactly-once. Without their bodies, which stay in the input (D49), they are small and
   * short-lived: in memory, as the task keeps them in memory anyway.
   */
  private static StoreBuilder<KeyValueStore<Long, PendingEvent>> heldStore() {
    return Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore(StoreNames.HELD),
            Serdes.Long(),
            new PendingEvent.PendingEventSerde())
        .withCachingDisabled()
        .withLoggingEnabled(PENDING_CHANGELOG);
  }

  private static void addSink(Topology topology, String name, String topic) {
    topology.addSink(
        name, topic, Serdes.String().serializer(), Serdes.ByteArray().serializer(), PROCESSOR);
  }
}
