package dev.runlane.processor;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.SocketBuffers;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.generation.InputChangedException;
import dev.runlane.processor.generation.InputCheck;
import dev.runlane.processor.runs.RunQueryHandler;
import dev.runlane.processor.runs.RunStoreMemory;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.PoisonEventException;
import dev.runlane.processor.topology.ProcessorMetrics;
import dev.runlane.processor.topology.ProcessorTopology;
import dev.runlane.processor.topology.RedisBudget;
import dev.runlane.processor.topology.StoreNames;
import dev.runlane.processor.topology.TopologySettings;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
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

/**
 * The running processor: topics ensured, admin port open, and Kafka Streams running the generation
 * the control topic names (D35). A follower checks once a second which generation to run and
 * whether its input still fits its state; it swaps Streams when the operator tools activate a new
 * generation, and stops them for good when the input changed under them (D36). Closes in reverse.
 */
public final class ProcessorApp implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProcessorApp.class);

  /** How often the follower reads the control topic and checks the input. */
  static final Duration FOLLOW_EVERY = Duration.ofSeconds(1);

  /**
   * Stream threads that die this often are not recovering: stop and fail liveness rather than
   * replace them for ever behind a live 200 (D36).
   */
  static final int MAX_THREAD_REPLACEMENTS = 5;

  static final Duration REPLACEMENT_WINDOW = Duration.ofMinutes(5);

  /** Consecutive checks that must find the input missing before the processor stops. */
  static final int MISSING_INPUT_CHECKS = 5;

  private final ProcessorConfig config;
  private final Dedup dedup;
  private final PrometheusMeterRegistry registry;
  private final FaultHook faultHook;
  private final RedisBudget redisBudget;
  private final TransactionAwareClients clients;
  private final AdminServer admin;
  private final HostInfo self;
  private final Admin kafkaAdmin;
  private final ControlTopic.Reader control;
  private final ScheduledExecutorService follower;
  private final Deque<Long> replacements = new ArrayDeque<>();
  private final AtomicReference<Running> running;
  private volatile String fatal;
  private boolean followFailing; // guarded by this
  private int missingInputChecks; // guarded by this
  private volatile Consumer<String> onFatal = reason -> {};
  private boolean closed;

  /** One generation's Streams client and what was made for it. */
  private record Running(
      Generation generation,
      KafkaStreams streams,
      KafkaStreamsMetrics metrics,
      String memoryPool) {} // memoryPool null: Streams' per-store RocksDB defaults

  private ProcessorApp(
      ProcessorConfig config,
      Dedup dedup,
      PrometheusMeterRegistry registry,
      FaultHook faultHook,
      AdminServer admin,
      HostInfo self,
      AtomicReference<Running> running) {
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
    this.admin = admin;
    this.self = self;
    this.running = running;
    this.kafkaAdmin = Admin.create(adminSettings(config));
    this.control =
        new ControlTopic.Reader(
            config.kafkaClient().withBootstrap(config.bootstrapServers()),
            config.controlTopic(),
            config.topics().webhooks());
    this.follower =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "processor-generations");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts the processor on the generation the control topic names.
   *
   * @throws InputChangedException if that generation's input no longer fits its state
   */
  public static ProcessorApp start(
      ProcessorConfig config, Dedup dedup, PrometheusMeterRegistry registry, FaultHook faultHook) {
    dedup.verifyAccess();
    ensureTopics(config);
    AtomicReference<Running> running = new AtomicReference<>();
    AtomicReference<ProcessorApp> appRef = new AtomicReference<>();
    AtomicReference<HostInfo> selfRef = new AtomicReference<>();
    AdminServer admin =
        AdminServer.start(
            "0.0.0.0",
            config.port(),
            registry,
            () -> appRef.get() == null || appRef.get().fatal == null,
            () -> {
              Running r = running.get();
              return r != null && r.streams().state() == KafkaStreams.State.RUNNING;
            },
            Map.of(
                "/runs/",
                new RunQueryHandler(
                    () -> {
                      Running r = running.get();
                      return r == null ? null : r.streams();
                    },
                    StoreNames.RUNS,
                    selfRef::get)));
    ProcessorApp app;
    try {
      selfRef.set(new HostInfo(config.advertisedHost(), admin.port()));
      app = new ProcessorApp(config, dedup, registry, faultHook, admin, selfRef.get(), running);
      appRef.set(app);
    } catch (RuntimeException e) {
      admin.close();
      throw e;
    }
    try {
      app.follow(true);
    } catch (RuntimeException e) {
      app.close();
      throw e;
    }
    app.follower.scheduleWithFixedDelay(
        () -> app.follow(false),
        FOLLOW_EVERY.toMillis(),
        FOLLOW_EVERY.toMillis(),
        TimeUnit.MILLISECONDS);
    return app;
  }

  /**
   * Reads which generation to run and runs it: starts it, swaps to it, or stops Streams while a
   * replay is prepared; and checks that the running generation's input still fits its state.
   *
   * @param first at start: failures are thrown instead of logged
   */
  private synchronized void follow(boolean first) {
    if (closed || fatal != null) {
      return;
    }
    try {
      Generation latest =
          control
              .latest(Duration.ofSeconds(first ? 30 : 10))
              .orElse(Generation.initial(config.applicationId(), config.topics().webhooks()));
      if (followFailing) {
        log.info("reading the control topic again");
        followFailing = false;
      }
      if (!latest.baseApplicationId().equals(config.applicationId())) {
        throw new InputChangedException(
            "the control record of "
                + config.topics().webhooks()
                + " in "
                + config.controlTopic()
                + " belongs to PROCESSOR_APPLICATION_ID="
                + latest.baseApplicationId()
                + ", not "
                + config.applicationId()
                + ": two processor deployments share one input");
      }
      Generation target = latest.toRun();
      Running now = running.get();
      if (target == null) {
        if (now != null || first) {
          log.info(
              "{} is being prepared by the operator tools: Streams stopped until it is active",
              latest.describe());
        }
        if (now != null) {
          stopStreams(now, true);
        }
        return;
      }
      InputCheck.verify(kafkaAdmin, target, Duration.ofSeconds(10));
      missingInputChecks = 0;
      if (now != null && now.generation().applicationId().equals(target.applicationId())) {
        return;
      }
      if (now != null) {
        log.info(
            "switching from generation {} to {}", now.generation().number(), target.describe());
        stopStreams(now, true);
      }
      running.set(startStreams(target));
    } catch (InputChangedException e) {
      if (first) {
        throw e;
      }
      // A broker that has not caught up with a topic's creation can answer "unknown topic" for a
      // moment: only a missing input that stays missing stops the processor.
      if (!e.inputMissing() || ++missingInputChecks >= MISSING_INPUT_CHECKS) {
        fail(e.getMessage());
      }
    } catch (RuntimeException e) {
      if (first) {
        throw e;
      }
      if (!followFailing) {
        log.warn("could not follow the control topic (retrying every second): {}", e.toString());
      }
      followFailing = true;
    }
  }

  private Running startStreams(Generation generation) {
    Topology topology =
        ProcessorTopology.build(
            TopologySettings.from(config, generation),
            dedup,
            new ProcessorMetrics(registry),
            EnvelopeParser.withDefaults(),
            faultHook,
            redisBudget,
            new InputRecords(
                config.kafkaClient().withBootstrap(config.bootstrapServers()),
                generation.applicationId() + "-held-reader"));
    Properties properties = streamsProperties(config, self, generation.applicationId());
    KafkaStreams streams = new KafkaStreams(topology, properties, clients);
    streams.setUncaughtExceptionHandler(this::onStreamThreadDied);
    streams.setStateListener(
        (next, previous) -> {
          log.info("streams state {} -> {}", previous, next);
          if (next == KafkaStreams.State.ERROR) {
            fail("Kafka Streams of " + generation.describe() + " stopped in state ERROR");
          }
        });
    KafkaStreamsMetrics streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(registry);
    streams.start();
    log.info(
        "processor started: {} admin port={} dedup={}",
        generation.describe(),
        admin.port(),
        dedup.enabled() ? "redis" : "off");
    return new Running(
        generation, streams, streamsMetrics, properties.getProperty(RunStoreMemory.POOL_CONFIG));
  }

  private StreamThreadExceptionResponse onStreamThreadDied(Throwable e) {
    if (invalidPartitions(e)) {
      fail(
          "the input's partitions changed under the running processor ("
              + rootMessage(e)
              + "): partitions were added outside `runlane partitions grow`. Run `runlane"
              + " partitions grow --to <the input's partition count>` to move to a new generation"
              + " that takes over (docs/operations.md, 'Partitions added by hand').");
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    }
    if (causedBy(e, PoisonEventException.class)) {
      // One event's decision threw: it is tried again a bounded number of times, then
      // dead-lettered (D43), so these deaths end by themselves.
      log.warn("stream thread failed deciding one event; replacing it: {}", rootMessage(e));
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    if (causedBy(e, DedupUnavailableException.class)) {
      // Block mode fails the thread on purpose while Redis is away, to retry from the last
      // commit: not a thread that cannot recover, so not counted.
      log.warn(
          "stream thread gave up waiting for Redis (block mode); replacing it: {}", e.toString());
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    }
    long now = System.nanoTime();
    synchronized (replacements) {
      replacements.addLast(now);
      while (now - replacements.peekFirst() > REPLACEMENT_WINDOW.toNanos()) {
        replacements.removeFirst();
      }
      if (replacements.size() > MAX_THREAD_REPLACEMENTS) {
        fail(
            "stream threads died "
                + replacements.size()
                + " times within "
                + REPLACEMENT_WINDOW.toMinutes()
                + " minutes; the last: "
                + e);
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      }
    }
    log.error("stream thread died; replacing it (its tasks restart from the last commit)", e);
    return StreamThreadExceptionResponse.REPLACE_THREAD;
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  /** Streams' own words when a changelog no longer matches its grown input. */
  private static boolean invalidPartitions(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && t.getMessage().contains("has invalid partitions")) {
        return true;
      }
    }
    return false;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage();
  }

  /** Stops for good: liveness turns DOWN, Streams closes, {@link #onFatal} hears why. */
  private void fail(String reason) {
    synchronized (replacements) {
      if (fatal != null) {
        return;
      }
      fatal = reason;
    }
    log.error("processor stopped: {}", reason);
    // Not on a stream thread: closing Streams from its own thread would wait for itself.
    // Under the app's lock: a swap in progress finishes first, and is then stopped too.
    Thread stopper =
        new Thread(
            () -> {
              synchronized (this) {
                Running r = running.getAndSet(null);
                if (r != null) {
                  stopStreams(r, false);
                }
              }
              onFatal.accept(reason);
            },
            "processor-fatal");
    stopper.setDaemon(true);
    stopper.start();
  }

  /**
   * Called once, on a thread of its own, when the processor stops for good (see {@link #fatal}).
   */
  public void onFatal(Consumer<String> listener) {
    this.onFatal = listener;
    String reason = fatal;
    if (reason != null) {
      listener.accept(reason);
    }
  }

  /** Why the processor stopped for good, or null while it runs (or can recover on its own). */
  public String fatal() {
    return fatal;
  }

  private void stopStreams(Running r, boolean leaveGroup) {
    running.compareAndSet(r, null);
    // Leaving the group on a swap lets the next generation's members and the tools see this one
    // gone at once; on shutdown we stay, so a restart with a static id takes its tasks back (D29).
    boolean storesClosed =
        r.streams()
            .close(
                CloseOptions.groupMembershipOperation(
                        leaveGroup
                            ? CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                            : CloseOptions.GroupMembershipOperation.DEFAULT)
                    .withTimeout(Duration.ofSeconds(30)));
    r.metrics().close();
    if (r.memoryPool() != null && storesClosed) {
      // Freed only once no store can use it: a store still open on a freed cache would crash
      // the JVM, where a leaked cache costs memory in a process that is stopping anyway.
      RunStoreMemory.release(r.memoryPool());
    }
  }

  static Properties streamsProperties(ProcessorConfig config, HostInfo self) {
    return streamsProperties(config, self, config.applicationId());
  }

  static Properties streamsProperties(ProcessorConfig config, HostInfo self, String applicationId) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
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
    p.put(
        StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG,
        DefaultProductionExceptionHandler.class);
    // A crashed member is only dropped after the session timeout: 45 s by default in Kafka 4.x,
    // during which its partitions stall. 6 s, the broker's minimum, keeps recovery short (D9).
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
    // The run-store changelog is the durable guard: as durable as the pipeline's topics.
    config
        .topicPolicy()
        .minInsyncReplicas()
        .ifPresent(
            n -> p.put(StreamsConfig.topicPrefix(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG), n));
    p.put(
        StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG),
        config.producerCompression().kafkaName());
    // Under exactly-once every commit flushes the producer, so the linger only groups records
    // between commits; a longer one measured no gain in the processor benchmark.
    p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
    p.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, config.transactionalStateStores());
    // /runs/{id} answers what is committed, so that a poller never sees a state that an aborted
    // transaction takes back (it would see the run move backwards, then forwards again). Only
    // transactional stores can tell: without them the read is of the latest write (D44).
    p.put(StreamsConfig.DEFAULT_INTERACTIVE_QUERY_ISOLATION_LEVEL_CONFIG, "READ_COMMITTED");
    if (config.rocksDbMemoryMb() > 0) {
      p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, RunStoreMemory.class);
      p.put(RunStoreMemory.POOL_CONFIG, applicationId + "/" + UUID.randomUUID());
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
    // The operator's client settings (security, ...), for every client Streams makes; the ones
    // runlane needs were refused when the configuration was loaded.
    p.putAll(config.kafkaClient().forClients());
    return p;
  }

  private static void ensureTopics(ProcessorConfig config) {
    TopicNames t = config.topics();
    TopicSettings s = config.topicSettings();
    try (Admin admin = Admin.create(adminSettings(config))) {
      TopicEnsurer.ensure(
          admin,
          List.of(
              config
                  .topicPolicy()
                  .apply(ControlTopic.newTopic(config.controlTopic(), s), TopicPolicy.Role.OTHER)),
          Duration.ofSeconds(30));
      int max = TopicEnsurer.maxMessageBytes(config.maxBodyBytes());
      TopicPolicy policy = config.topicPolicy();
      Map<String, TopicPolicy.Role> roles = new LinkedHashMap<>();
      roles.put(t.webhooks(), TopicPolicy.Role.WEBHOOKS);
      roles.put(t.dlq(), TopicPolicy.Role.DLQ);
      roles.put(t.events(), TopicPolicy.Role.EVENTS);
      roles.put(t.stale(), TopicPolicy.Role.OTHER);
      roles.put(t.runs(), TopicPolicy.Role.OTHER);
      TopicEnsurer.ensure(
          admin,
          roles.entrySet().stream()
              .map(
                  e -> {
                    NewTopic topic =
                        e.getKey().equals(t.runs())
                            ? TopicEnsurer.compacted(e.getKey(), s)
                            : TopicEnsurer.plain(e.getKey(), s);
                    return TopicEnsurer.sized(policy.apply(topic, e.getValue()), max);
                  })
              .toList(),
          Duration.ofSeconds(30));
      // Topics that existed are the operator's: say what is weaker than asked, and go on.
      policy
          .weaker(admin, roles, s.replicationFactor(), config.bootstrapServers())
          .forEach(w -> log.warn("topic settings: {}", w));
    }
  }

  private static Map<String, Object> adminSettings(ProcessorConfig config) {
    Map<String, Object> m = config.kafkaClient().withBootstrap(config.bootstrapServers());
    m.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return m;
  }

  /** The Streams client of the running generation, or null while none runs. */
  public KafkaStreams streams() {
    Running r = running.get();
    return r == null ? null : r.streams();
  }

  /** The generation running now, or null while none runs (a replay being prepared, stopped). */
  public Generation generation() {
    Running r = running.get();
    return r == null ? null : r.generation();
  }

  /**
   * Waits until Streams is RUNNING (every task assigned and restored).
   *
   * @throws IllegalStateException if Streams stopped instead, or after {@code timeout}
   */
  public void awaitRunning(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    KafkaStreams.State state;
    while ((state = stateNow()) != KafkaStreams.State.RUNNING) {
      if (fatal != null) {
        throw new IllegalStateException("the processor stopped while starting: " + fatal);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the processor was not RUNNING within " + timeout + " (state " + state + ")");
      }
      // Polling a state with a deadline; 5 ms keeps "RUNNING at" precise for benchmarks.
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
    }
  }

  /** The running generation's Streams state, or CREATED while none runs yet. */
  private KafkaStreams.State stateNow() {
    KafkaStreams s = streams();
    return s == null ? KafkaStreams.State.CREATED : s.state();
  }

  public int adminPort() {
    return admin.port();
  }

  public ProcessorConfig config() {
    return config;
  }

  /** Closes in reverse order of start: follower, admin port, Streams (committing), Redis. */
  @Override
  public void close() {
    // No interrupt: a swap in progress finishes (a Streams close cut short by an interrupt could
    // leave its state dir locked); the lock below waits for it.
    follower.shutdown();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      log.info("processor stopping");
      admin.close();
      Running r = running.getAndSet(null);
      if (r != null) {
        stopStreams(r, false);
      }
    }
    control.close();
    kafkaAdmin.close(Duration.ofSeconds(5));
    dedup.close();
    log.info("processor stopped");
  }
}
