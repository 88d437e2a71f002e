package dev.runlane.processor;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.SocketBuffers;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.runs.RunQueryHandler;
import dev.runlane.processor.runs.RunStoreMemory;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.ProcessorMetrics;
import dev.runlane.processor.topology.ProcessorTopology;
import dev.runlane.processor.topology.StoreNames;
import dev.runlane.processor.topology.TopologySettings;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.DefaultProductionExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The running processor: topics ensured, Streams started, admin port open. Closes in reverse. */
public final class ProcessorApp implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProcessorApp.class);

  private final ProcessorConfig config;
  private final Dedup dedup;
  private final AdminServer admin;
  private final KafkaStreams streams;
  private final KafkaStreamsMetrics streamsMetrics;
  private final String memoryPool; // null: Streams' per-store RocksDB defaults
  private boolean closed;

  private ProcessorApp(
      ProcessorConfig config,
      Dedup dedup,
      AdminServer admin,
      KafkaStreams streams,
      KafkaStreamsMetrics streamsMetrics,
      String memoryPool) {
    this.config = config;
    this.dedup = dedup;
    this.admin = admin;
    this.streams = streams;
    this.streamsMetrics = streamsMetrics;
    this.memoryPool = memoryPool;
  }

  public static ProcessorApp start(
      ProcessorConfig config, Dedup dedup, PrometheusMeterRegistry registry, FaultHook faultHook) {
    ensureTopics(config);
    AtomicReference<KafkaStreams> streamsRef = new AtomicReference<>();
    AtomicReference<HostInfo> self = new AtomicReference<>();
    AdminServer admin =
        AdminServer.start(
            "0.0.0.0",
            config.port(),
            registry,
            () -> {
              KafkaStreams s = streamsRef.get();
              return s != null && s.state() == KafkaStreams.State.RUNNING;
            },
            Map.of("/runs/", new RunQueryHandler(streamsRef::get, StoreNames.RUNS, self::get)));
    try {
      self.set(new HostInfo(config.advertisedHost(), admin.port()));
      Topology topology =
          ProcessorTopology.build(
              TopologySettings.from(config),
              dedup,
              new ProcessorMetrics(registry),
              EnvelopeParser.withDefaults(),
              faultHook);
      Properties properties = streamsProperties(config, self.get());
      KafkaStreams streams = new KafkaStreams(topology, properties);
      streams.setUncaughtExceptionHandler(
          e -> {
            log.error(
                "stream thread died; replacing it (its tasks restart from the last commit)", e);
            return StreamThreadExceptionResponse.REPLACE_THREAD;
          });
      streams.setStateListener(
          (next, previous) -> log.info("streams state {} -> {}", previous, next));
      KafkaStreamsMetrics streamsMetrics = new KafkaStreamsMetrics(streams);
      streamsMetrics.bindTo(registry);
      streamsRef.set(streams);
      streams.start();
      log.info(
          "processor started: application.id={} input={} admin port={} dedup={}",
          config.applicationId(),
          config.topics().webhooks(),
          admin.port(),
          dedup.enabled() ? "redis" : "off");
      return new ProcessorApp(
          config,
          dedup,
          admin,
          streams,
          streamsMetrics,
          properties.getProperty(RunStoreMemory.POOL_CONFIG));
    } catch (RuntimeException e) {
      admin.close();
      throw e;
    }
  }

  static Properties streamsProperties(ProcessorConfig config, HostInfo self) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, config.processingGuarantee());
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, config.streamThreads());
    p.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir().toAbsolutePath().toString());
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.commitInterval().toMillis());
    p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, self.host() + ":" + self.port());
    p.put(
        StreamsConfig.REPLICATION_FACTOR_CONFIG, (int) config.topicSettings().replicationFactor());
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndFailExceptionHandler.class);
    p.put(
        StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndFailProcessingExceptionHandler.class);
    p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, true);
    p.put(
        StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG,
        DefaultProductionExceptionHandler.class);
    // A crashed member is only dropped after the session timeout: 45 s by default in Kafka 4.x,
    // during which its partitions stall. Six seconds keeps recovery short (measured in the ITs).
    long session = config.sessionTimeout().toMillis();
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), (int) session);
    p.put(
        StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
        (int) Math.max(500, session / 4));
    // Every record we write (pending entry, applied event, run state) carries up to one body:
    // size the producer and the internal topics by the same rule as the pipeline's topics.
    int maxMessage = TopicEnsurer.maxMessageBytes(config.maxBodyBytes());
    p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), maxMessage);
    p.put(StreamsConfig.topicPrefix(TopicConfig.MAX_MESSAGE_BYTES_CONFIG), maxMessage);
    p.put(
        StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG),
        config.producerCompression().kafkaName());
    // Under exactly-once every commit flushes the producer, so the linger only groups records
    // between commits; a longer one measured no gain (BENCHMARKS.md, second pass).
    p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
    p.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, config.transactionalStateStores());
    if (config.rocksDbMemoryMb() > 0) {
      p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, RunStoreMemory.class);
      p.put(RunStoreMemory.POOL_CONFIG, config.applicationId() + "/" + UUID.randomUUID());
      p.put(RunStoreMemory.BYTES_CONFIG, config.rocksDbMemoryMb() * 1024L * 1024L);
    }
    config
        .groupInstanceId()
        .ifPresent(
            id ->
                p.put(
                    StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), id));
    // At a live rate every produce to the input would complete a waiting fetch: ~1,000 polls a
    // second of a record or two, each paying the stream thread's loop and the broker's fetch. Wait
    // for 32 KiB or 10 ms instead; a backlog fills the fetch at once (D21).
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), 32 * 1024);
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 10);
    // Every client Streams makes: a fixed 64 KiB receive buffer dropped fetch responses (D34).
    p.putAll(SocketBuffers.OS_DEFAULTS);
    return p;
  }

  private static void ensureTopics(ProcessorConfig config) {
    TopicNames t = config.topics();
    TopicSettings s = config.topicSettings();
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                config.bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                30_000))) {
      int max = TopicEnsurer.maxMessageBytes(config.maxBodyBytes());
      TopicEnsurer.ensure(
          admin,
          List.of(
                  TopicEnsurer.plain(t.webhooks(), s),
                  TopicEnsurer.plain(t.dlq(), s),
                  TopicEnsurer.plain(t.events(), s),
                  TopicEnsurer.plain(t.stale(), s),
                  TopicEnsurer.compacted(t.runs(), s))
              .stream()
              .map(topic -> TopicEnsurer.sized(topic, max))
              .toList(),
          Duration.ofSeconds(30));
    }
  }

  public KafkaStreams streams() {
    return streams;
  }

  /**
   * Waits until Streams is RUNNING (every task assigned and restored).
   *
   * @throws IllegalStateException if Streams stopped instead, or after {@code timeout}
   */
  public void awaitRunning(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    KafkaStreams.State state;
    while ((state = streams.state()) != KafkaStreams.State.RUNNING) {
      if (state == KafkaStreams.State.ERROR || state == KafkaStreams.State.NOT_RUNNING) {
        throw new IllegalStateException("the processor stopped while starting: " + state);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the processor was not RUNNING within " + timeout + " (state " + state + ")");
      }
      // Polling a state with a deadline; 5 ms keeps "RUNNING at" precise for benchmarks.
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
    }
  }

  public int adminPort() {
    return admin.port();
  }

  public ProcessorConfig config() {
    return config;
  }

  /** Closes in reverse order of start: admin port, Streams (committing), Redis. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    log.info("processor stopping");
    admin.close();
    boolean storesClosed = streams.close(Duration.ofSeconds(30));
    streamsMetrics.close();
    if (memoryPool != null && storesClosed) {
      // Freed only once no store can use it: a store still open on a freed cache would crash
      // the JVM, where a leaked cache costs memory in a process that is stopping anyway.
      RunStoreMemory.release(memoryPool);
    }
    dedup.close();
    log.info("processor stopped");
  }
}
