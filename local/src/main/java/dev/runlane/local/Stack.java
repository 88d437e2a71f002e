package dev.runlane.local;

import dev.runlane.common.config.Secret;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.embedded.EmbeddedPostgres;
import dev.runlane.embedded.EmbeddedRedisCluster;
import dev.runlane.ingress.IngressApp;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.local.verify.PipelineVerifier;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.sink.SinkApp;
import dev.runlane.sink.SinkConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole pipeline in this JVM: an embedded KRaft broker, Redis ({@code REDIS_URL}, else {@code
 * localhost:6379}, else the bundled {@code redis-server}), the ingress and the processor, and
 * (unless left out) an embedded PostgreSQL with the sink writing {@code sume.events} into it.
 * Started in that order; {@link #close()} stops them in reverse. The broker and the processor's
 * state live in temp dirs that {@link #close()} deletes: every stack starts empty. Redis keys are
 * namespaced per stack, so a shared Redis is never confused by an earlier stack.
 */
public final class Stack implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Stack.class);

  public static final String APPLICATION_ID = "runlane-processor";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

  /**
   * How to start the stack.
   *
   * @param host the address the ingress binds (the processor's admin port binds every address)
   * @param ingressPort webhooks; 0 picks a free port
   * @param ingressAdminPort ingress health and metrics; 0 picks a free port
   * @param processorPort processor health, metrics and {@code /runs/{id}}; 0 picks a free port
   * @param partitions partitions of each topic
   * @param secret the Sume signing secret the ingress accepts
   * @param redisUri a Redis to use, or null for {@code REDIS_URL}/localhost/bundled
   * @param redisCluster start a 3-primary Redis Cluster for the stack instead (D82)
   * @param processorEnv settings given to the processor over the stack's own (a test's budget)
   */
  public record Settings(
      String host,
      int ingressPort,
      int ingressAdminPort,
      int processorPort,
      int partitions,
      Secret secret,
      URI redisUri,
      Duration reorderWindow,
      boolean sink,
      boolean redisCluster,
      Map<String, String> processorEnv) {

    /** The documented default ports 8080, 9080 and 9081 on loopback, 6 partitions, a sink. */
    public static Settings defaults(Secret secret) {
      return new Settings(
          "127.0.0.1", 8080, 9080, 9081, 6, secret, null, Duration.ZERO, true, false, Map.of());
    }

    /** Free ports for everything: never clashes with another stack or service. */
    public static Settings freePorts(Secret secret) {
      return new Settings(
          "127.0.0.1", 0, 0, 0, 6, secret, null, Duration.ZERO, true, false, Map.of());
    }

    /** The same, with the processor's reorder window (D46). */
    public Settings withReorderWindow(Duration window) {
      return new Settings(
          host,
          ingressPort,
          ingressAdminPort,
          processorPort,
          partitions,
          secret,
          redisUri,
          window,
          sink,
          redisCluster,
          processorEnv);
    }

    /** The same, with a given Redis (a test that restarts it gives its own). */
    public Settings withRedis(URI uri) {
      return new Settings(
          host,
          ingressPort,
          ingressAdminPort,
          processorPort,
          partitions,
          secret,
          uri,
          reorderWindow,
          sink,
          redisCluster,
          processorEnv);
    }

    /** The same, with or without PostgreSQL and the sink (about 2 s of start-up). */
    public Settings withSink(boolean withSink) {
      return new Settings(
          host,
          ingressPort,
          ingressAdminPort,
          processorPort,
          partitions,
          secret,
          redisUri,
          reorderWindow,
          withSink,
          redisCluster,
          processorEnv);
    }

    /**
     * The same, on a 3-primary Redis Cluster of the bundled {@code redis-server} that the stack
     * starts and stops ({@code runlane up --redis-cluster}, D82).
     */
    public Settings withRedisCluster() {
      return new Settings(
          host,
          ingressPort,
          ingressAdminPort,
          processorPort,
          partitions,
          secret,
          redisUri,
          reorderWindow,
          sink,
          true,
          processorEnv);
    }

    /** The same, with {@code env} given to the processor over the stack's own settings. */
    public Settings withProcessorEnv(Map<String, String> env) {
      return new Settings(
          host,
          ingressPort,
          ingressAdminPort,
          processorPort,
          partitions,
          secret,
          redisUri,
          reorderWindow,
          sink,
          redisCluster,
          Map.copyOf(env));
    }
  }

  private final Settings settings;
  private final EmbeddedKafka kafka;
  private final LocalRedis redis;
  private final String dedupKeyPrefix;
  private final Path stateDir;
  private final TopicNames topics = TopicNames.defaults();
  private final PrometheusMeterRegistry ingressRegistry;
  private final PrometheusMeterRegistry processorRegistry;
  private final ProcessorApp processor;
  private final Sink sink; // null without a sink
  private IngressConfig ingressConfig; // guarded by this
  private IngressApp ingress; // guarded by this
  private boolean closed; // guarded by this

  private Stack(
      Settings settings,
      EmbeddedKafka kafka,
      LocalRedis redis,
      String dedupKeyPrefix,
      Path stateDir,
      PrometheusMeterRegistry ingressRegistry,
      IngressConfig ingressConfig,
      IngressApp ingress,
      PrometheusMeterRegistry processorRegistry,
      ProcessorApp processor,
      Sink sink) {
    this.settings = settings;
    this.kafka = kafka;
    this.redis = redis;
    this.dedupKeyPrefix = dedupKeyPrefix;
    this.stateDir = stateDir;
    this.ingressRegistry = ingressRegistry;
    this.ingressConfig = ingressConfig;
    this.ingress = ingress;
    this.processorRegistry = processorRegistry;
    this.processor = processor;
    this.sink = sink;
  }

  /** PostgreSQL and the sink writing sume.events into it. */
  private record Sink(EmbeddedPostgres postgres, String database, SinkApp app) {}

  /** A random signing secret for a local stack. */
  public static Secret newSecret() {
    byte[] bytes = new byte[24];
    new SecureRandom().nextBytes(bytes);
    return Secret.of("local_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
  }

  /** Starts everything and returns when the ingress is ready and the processor is RUNNING. */
  public static Stack start(Settings settings) {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      EmbeddedKafka kafka = EmbeddedKafka.start();
      started.add(0, kafka);

      LocalRedis redis = LocalRedis.resolve(settings.redisUri(), settings.redisCluster());
      started.add(0, redis);

      Path stateDir = Files.createTempDirectory("runlane-local-processor-");
      started.add(0, () -> deleteRecursively(stateDir));

      PrometheusMeterRegistry ingressRegistry = Metrics.newRegistry("ingress");
      started.add(0, ingressRegistry::close);
      IngressConfig ingressConfig =
          IngressConfig.fromEnv(ingressEnv(settings, kafka.bootstrapServers()))
              .withPorts(settings.ingressPort(), settings.ingressAdminPort());
      IngressApp ingress = IngressApp.start(ingressConfig, ingressRegistry);
      started.add(0, ingress);
      // A restarted ingress comes back on the same ports.
      ingressConfig = ingressConfig.withPorts(ingress.port(), ingress.adminPort());

      PrometheusMeterRegistry processorRegistry = Metrics.newRegistry("processor");
      started.add(0, processorRegistry::close);
      // A per-stack key namespace: an earlier stack's "done" markers on a shared Redis must never
      // classify this stack's events (its broker and run store start empty).
      String stackId = Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36);
      String dedupKeyPrefix = "runlane:local:" + stackId + ":dedup:";
      ProcessorConfig processorConfig =
          processorConfig(
              settings, kafka.bootstrapServers(), redis.uri(), dedupKeyPrefix, stateDir);
      ProcessorApp processor =
          ProcessorApp.start(
              processorConfig,
              new RedisDedup(processorConfig.redisDedupSettings(), processorRegistry),
              processorRegistry,
              FaultHook.NONE);
      started.add(0, processor);
      processor.awaitRunning(READY_TIMEOUT);

      Sink sink = null;
      if (settings.sink()) {
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        started.add(0, postgres);
        String database = postgres.createDatabase("runlane");
        PrometheusMeterRegistry sinkRegistry = Metrics.newRegistry("sink");
        started.add(0, sinkRegistry::close);
        SinkApp app =
            SinkApp.start(
                SinkConfig.fromEnv(
                        Map.of(
                            "KAFKA_BOOTSTRAP_SERVERS",
                            kafka.bootstrapServers(),
                            "SINK_DATABASE_URL",
                            postgres.jdbcUrl(database),
                            "SINK_DATABASE_USER",
                            postgres.username()))
                    .withPort(0),
                sinkRegistry);
        started.add(0, app);
        app.awaitReady(READY_TIMEOUT);
        sink = new Sink(postgres, database, app);
      }

      Stack stack =
          new Stack(
              settings,
              kafka,
              redis,
              dedupKeyPrefix,
              stateDir,
              ingressRegistry,
              ingressConfig,
              ingress,
              processorRegistry,
              processor,
              sink);
      log.info("local stack up: kafka {}, redis {}", kafka.bootstrapServers(), redis.description());
      return stack;
    } catch (IOException e) {
      closeAll(started, null);
      throw new UncheckedIOException("cannot create the processor's state dir", e);
    } catch (RuntimeException | Error e) {
      closeAll(started, e);
      throw e;
    }
  }

  private static Map<String, String> ingressEnv(Settings settings, String bootstrap) {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("SUME_SIGNING_SECRETS", settings.secret().reveal());
    env.put("INGRESS_HOST", settings.host());
    env.put("TOPIC_PARTITIONS", Integer.toString(settings.partitions()));
    env.put("INGRESS_EVENT_LOOPS", "2");
    env.put("KAFKA_STARTUP_TIMEOUT_SECONDS", "30");
    return env;
  }

  private static ProcessorConfig processorConfig(
      Settings settings, String bootstrap, URI redisUri, String keyPrefix, Path stateDir) {
    Map<String, String> env = new HashMap<>();
    env.put("PROCESSOR_REORDER_WINDOW", settings.reorderWindow().toMillis() + "ms");
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("REDIS_URL", redisUri.toString());
    env.put("PROCESSOR_APPLICATION_ID", APPLICATION_ID);
    env.put("PROCESSOR_STATE_DIR", stateDir.toString());
    env.put("DEDUP_KEY_PREFIX", keyPrefix);
    env.put("TOPIC_PARTITIONS", Integer.toString(settings.partitions()));
    env.putAll(settings.processorEnv());
    return ProcessorConfig.fromEnv(env).withPort(settings.processorPort());
  }

  public String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  public URI redisUri() {
    return redis.uri();
  }

  /** The Redis and where it came from, e.g. {@code redis://127.0.0.1:40123 (bundled_binary)}. */
  public String redisDescription() {
    return redis.description();
  }

  /** The Redis Cluster the stack started ({@link Settings#withRedisCluster()}), or null. */
  public EmbeddedRedisCluster redisCluster() {
    return redis.cluster();
  }

  /** What the processor's dedup keys start with: this stack's own namespace. */
  public String dedupKeyPrefix() {
    return dedupKeyPrefix;
  }

  public Secret secret() {
    return settings.secret();
  }

  public TopicNames topics() {
    return topics;
  }

  public String applicationId() {
    return APPLICATION_ID;
  }

  /** {@code http://<host>:<port>/webhooks/sume}. */
  public synchronized URI webhookUri() {
    return URI.create("http://" + hostForUrl() + ":" + ingressConfig.port() + "/webhooks/sume");
  }

  /** {@code http://<host>:<admin port>}. */
  public synchronized URI ingressAdminUri() {
    return URI.create("http://" + hostForUrl() + ":" + ingressConfig.adminPort());
  }

  /** {@code http://127.0.0.1:<processor port>}: health, metrics, {@code /runs/{id}}. */
  public URI processorUri() {
    return URI.create("http://127.0.0.1:" + processor.adminPort());
  }

  public ProcessorApp processor() {
    return processor;
  }

  public PrometheusMeterRegistry processorRegistry() {
    return processorRegistry;
  }

  public PrometheusMeterRegistry ingressRegistry() {
    return ingressRegistry;
  }

  /** Where a {@link PipelineVerifier} finds this stack. */
  public PipelineVerifier.Target verifierTarget() {
    return new PipelineVerifier.Target(
        bootstrapServers(), topics, processorUri(), applicationId(), sinkTarget());
  }

  /** The sink's database and admin port, or null without a sink. */
  public PipelineVerifier.SinkTarget sinkTarget() {
    return sink == null
        ? null
        : new PipelineVerifier.SinkTarget(
            sink.postgres().jdbcUrl(sink.database()),
            sink.postgres().username(),
            URI.create("http://127.0.0.1:" + sink.app().adminPort()));
  }

  /** Whether the ingress is running (see {@link #stopIngress()}). */
  public synchronized boolean ingressRunning() {
    return ingress != null;
  }

  /** Stops the ingress gracefully (in-flight requests get their answer); its port goes dark. */
  public synchronized void stopIngress() {
    if (ingress != null) {
      ingress.close();
      ingress = null;
    }
  }

  /** Starts a new ingress on the same ports as the first one. */
  public synchronized void startIngress() {
    if (closed) {
      throw new IllegalStateException("the stack is closed");
    }
    if (ingress == null) {
      ingress = IngressApp.start(ingressConfig, ingressRegistry);
    }
  }

  /** Stops the ingress, the processor, then the broker, and deletes their data. Idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    List<AutoCloseable> parts = new ArrayList<>();
    parts.add(this::stopIngress);
    if (sink != null) {
      parts.add(sink.app());
      parts.add(sink.postgres());
    }
    parts.add(processor);
    parts.add(redis);
    parts.add(processorRegistry::close);
    parts.add(ingressRegistry::close);
    parts.add(kafka);
    parts.add(() -> deleteRecursively(stateDir));
    closeAll(parts, null);
    log.info("local stack stopped");
  }

  private String hostForUrl() {
    String host = settings.host();
    return host.equals("0.0.0.0") ? "127.0.0.1" : host;
  }

  private static void closeAll(List<AutoCloseable> parts, Throwable failure) {
    for (AutoCloseable part : parts) {
      try {
        part.close();
      } catch (Exception e) {
        if (failure != null) {
          failure.addSuppressed(e);
        } else {
          log.warn("error while stopping the local stack", e);
        }
      }
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
