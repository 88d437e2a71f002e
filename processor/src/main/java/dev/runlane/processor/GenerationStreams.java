package dev.runlane.processor;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Generation;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.generation.GenerationFollower;
import dev.runlane.processor.generation.ReplayCatchUp;
import dev.runlane.processor.runs.Rederiving;
import dev.runlane.processor.runs.RunStoreMemory;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.ProcessorMetrics;
import dev.runlane.processor.topology.ProcessorTopology;
import dev.runlane.processor.topology.RedisBudget;
import dev.runlane.processor.topology.TopologySettings;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka Streams client of the generation running now, and what was made for it: started and
 * stopped by the {@link GenerationFollower}, stopped for good by the processor. Starts and stops
 * are serialized on this object. It tells the run query whether a replay is re-deriving runs: from
 * the moment the tools prepare one until the new generation has caught up, partition by partition
 * (D69).
 */
final class GenerationStreams implements GenerationFollower.Streams, Rederiving {
  // Logged under ProcessorApp's name, as before this class existed: log filters still match.
  private static final Logger log = LoggerFactory.getLogger(ProcessorApp.class);

  private final ProcessorConfig config;
  private final Dedup dedup;
  private final PrometheusMeterRegistry registry;
  private final FaultHook faultHook;
  private final RedisBudget redisBudget;
  private final TransactionAwareClients clients;
  private final ThreadDeathPolicy deaths;
  private final Consumer<String> fail;
  private final AtomicReference<Running> running = new AtomicReference<>();
  private volatile HostInfo self;
  private volatile boolean replayPrepared; // Streams stopped while the tools prepare a replay

  /** One generation's Streams client and what was made for it. */
  private record Running(
      Generation generation,
      KafkaStreams streams,
      KafkaStreamsMetrics metrics,
      String memoryPool, // null: Streams' per-store RocksDB defaults
      ReplayCatchUp catchUp) {} // null: the generation replays nothing

  /**
   * @param fail stops the processor for good, with the reason
   */
  GenerationStreams(
      ProcessorConfig config,
      Dedup dedup,
      PrometheusMeterRegistry registry,
      FaultHook faultHook,
      ThreadDeathPolicy deaths,
      Consumer<String> fail) {
    this.config = config;
    this.dedup = dedup;
    this.registry = registry;
    this.faultHook = faultHook;
    // Only transactions have a timeout to stay under; at-least-once has none to bound (D42).
    this.redisBudget =
        "exactly_once_v2".equals(config.processingGuarantee())
            ? RedisBudget.perTransaction(RedisBudget.PER_TRANSACTION)
            : RedisBudget.unbounded();
    this.clients = new TransactionAwareClients(redisBudget, registry);
    this.deaths = deaths;
    this.fail = fail;
  }

  /** Where this instance answers interactive queries: its admin server, once that is bound. */
  void serveAt(HostInfo self) {
    this.self = self;
  }

  HostInfo self() {
    return self;
  }

  /** The Streams client of the running generation, or null while none runs. */
  KafkaStreams streams() {
    Running r = running.get();
    return r == null ? null : r.streams();
  }

  /** Whether a generation runs and its Streams is RUNNING: the processor's readiness. */
  boolean isRunning() {
    Running r = running.get();
    return r != null && r.streams().state() == KafkaStreams.State.RUNNING;
  }

  @Override
  public Generation running() {
    Running r = running.get();
    return r == null ? null : r.generation();
  }

  @Override
  public boolean on(int partition) {
    Running r = running.get();
    if (r == null) {
      return replayPrepared;
    }
    if (r.catchUp() == null) {
      return false;
    }
    return partition == Rederiving.ANY
        ? r.catchUp().rederiving()
        : r.catchUp().rederiving(partition);
  }

  @Override
  public void preparing(Generation latest) {
    replayPrepared =
        latest.kind() == Generation.Kind.REBUILD || latest.kind() == Generation.Kind.REPROCESS;
  }

  @Override
  public synchronized void start(Generation generation) {
    Topology topology = topology(config, generation, dedup, registry, faultHook, redisBudget);
    Properties properties = StreamsSettings.of(config, self, generation.applicationId());
    KafkaStreams streams = new StreamsWithSafeMetrics(topology, properties, clients);
    streams.setUncaughtExceptionHandler(deaths::onStreamThreadDied);
    streams.setStateListener(
        (next, previous) -> {
          log.info("streams state {} -> {}", previous, next);
          if (next == KafkaStreams.State.ERROR) {
            fail.accept("Kafka Streams of " + generation.describe() + " stopped in state ERROR");
          }
        });
    KafkaStreamsMetrics streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(registry);
    streams.start();
    log.info(
        "processor started: {} admin port={} dedup={}",
        generation.describe(),
        self.port(),
        dedup.enabled() ? "redis" : "off");
    running.set(
        new Running(
            generation,
            streams,
            streamsMetrics,
            properties.getProperty(RunStoreMemory.POOL_CONFIG),
            ReplayCatchUp.start(
                generation, config.kafkaClient().withBootstrap(config.bootstrapServers()))));
    replayPrepared = false;
  }

  /** A generation's topology, as its start builds it; the class-data training builds it so too. */
  static Topology topology(
      ProcessorConfig config,
      Generation generation,
      Dedup dedup,
      PrometheusMeterRegistry registry,
      FaultHook faultHook,
      RedisBudget budget) {
    return ProcessorTopology.build(
        TopologySettings.from(config, generation),
        dedup,
        new ProcessorMetrics(registry),
        EnvelopeParser.withDefaults(),
        faultHook,
        budget,
        new InputRecords(
            config.kafkaClient().withBootstrap(config.bootstrapServers()),
            generation.applicationId() + "-held-reader"));
  }

  /** Stops the running generation's Streams for a swap or a replay: it leaves its group. */
  @Override
  public void stop() {
    stop(true);
  }

  /**
   * Stops the running generation's Streams for a shutdown. A stream thread sees a close only once
   * it has no fetched record left, so it would first decide all it fetched: up to a poll's 1,000
   * records, seconds under load and most of a rolling update's pause (D102). Paused first, it
   * finishes the task and the drain it is in, and stops; the records it fetched and never reached
   * stay uncommitted, for its successor to read (D108).
   *
   * @param leaveGroup leave the consumer group (D102), or stay in it
   */
  synchronized void shutdown(boolean leaveGroup) {
    Running r = running.get();
    if (r != null) {
      r.streams().pause();
    }
    stop(leaveGroup);
  }

  /**
   * Stops the running generation's Streams, if one runs.
   *
   * @param leaveGroup leave the consumer group (a swap, or a shutdown told to leave, D102), or stay
   *     in it (a shutdown, by default)
   */
  synchronized void stop(boolean leaveGroup) {
    Running r = running.getAndSet(null);
    if (r == null) {
      return;
    }
    // Leaving the group on a swap lets the next generation's members and the tools see this one
    // gone at once; on shutdown we stay unless told to leave, so a restart with a static id takes
    // its tasks back (D29), or hand them over at once when successors start slower than the
    // session timeout (D102).
    boolean storesClosed =
        r.streams()
            .close(
                CloseOptions.groupMembershipOperation(
                        leaveGroup
                            ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                            : CloseOptions.GroupMembershipOperation.DEFAULT)
                    .withTimeout(Duration.ofSeconds(30)));
    r.metrics().close();
    if (r.catchUp() != null) {
      r.catchUp().close();
    }
    if (r.memoryPool() != null && storesClosed) {
      // Freed only once no store can use it: a store still open on a freed cache would crash
      // the JVM, where a leaked cache costs memory in a process that is stopping anyway.
      RunStoreMemory.release(r.memoryPool());
    }
  }
}
