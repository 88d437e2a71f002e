package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.config.Secret;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.StateTopics;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.embedded.FreePorts;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.Postgres;
import dev.runlane.ingress.IngressApp;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.local.Stack;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.PipelineVerifier;
import dev.runlane.local.verify.Report;
import dev.runlane.processor.ProcessorApp;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.sink.SinkApp;
import dev.runlane.sink.SinkConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The pipeline as it is deployed, on the shared real broker and Redis: one ingress app, several
 * processor apps (each with its own state dir and admin port), the operator tools run as their
 * command line, with the same environment, and optionally the sink on a database of its own. Its
 * own topics, application id, control topic and Redis key namespace.
 */
final class Deployment implements AutoCloseable {
  final Infra infra;
  final String name;
  final Secret secret = Stack.newSecret();
  final TopicNames topics;
  final String applicationId;
  final String controlTopic;
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final Map<String, String> env = new LinkedHashMap<>();
  private final List<ProcessorApp> processors = new ArrayList<>();
  private final List<PrometheusMeterRegistry> registries = new ArrayList<>();
  private final List<Path> stateDirs = new ArrayList<>();
  private IngressApp ingress;
  private Postgres postgres;
  private String database;
  private SinkApp sink;
  private PrometheusMeterRegistry sinkRegistry;
  private FaultHook faultHook = FaultHook.NONE;

  Deployment(Infra infra, String prefix, int partitions, int processorCount) {
    this.infra = infra;
    this.name = infra.uniqueName(prefix);
    this.topics =
        new TopicNames(
            name + ".webhooks", name + ".dlq", name + ".events", name + ".stale", name + ".runs");
    this.applicationId = name + "-processor";
    this.controlTopic = name + ".control";
    env.put("KAFKA_BOOTSTRAP_SERVERS", infra.bootstrapServers());
    env.put("REDIS_URL", infra.redisUri().toString());
    env.put("PROCESSOR_APPLICATION_ID", applicationId);
    env.put("DEDUP_KEY_PREFIX", "test:" + name + ":");
    env.put("REDIS_TIMEOUT_MS", "500");
    env.put("TOPIC_WEBHOOKS", topics.webhooks());
    env.put("TOPIC_DLQ", topics.dlq());
    env.put("TOPIC_EVENTS", topics.events());
    env.put("TOPIC_STALE", topics.stale());
    env.put("TOPIC_RUNS", topics.runs());
    env.put("TOPIC_DECISIONS", name + ".decisions");
    env.put("TOPIC_CONTROL", controlTopic);
    env.put("TOPIC_PARTITIONS", Integer.toString(partitions));
    env.put("TOPIC_REPLICATION_FACTOR", "1");
    env.put("SUME_SIGNING_SECRETS", secret.reveal());
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("PROCESSOR_ADVERTISED_HOST", "127.0.0.1");
    for (int i = 0; i < processorCount; i++) {
      processors.add(null);
      registries.add(null);
      try {
        stateDirs.add(Files.createTempDirectory("runlane-" + name + "-" + i));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  Map<String, String> env() {
    return Map.copyOf(env);
  }

  /** Sets one variable for the services started from now on, as a redeploy would. */
  Deployment with(String variable, String value) {
    env.put(variable, value);
    return this;
  }

  /** The test seam every processor started from now on runs with. */
  Deployment withFaultHook(FaultHook hook) {
    this.faultHook = hook;
    return this;
  }

  Deployment startIngress() {
    ingress =
        IngressApp.start(
            IngressConfig.fromEnv(env).withPorts(0, 0), Metrics.newRegistry("ingress"));
    return this;
  }

  /**
   * Another ingress of this deployment (the caller closes it), with {@code overrides} on its
   * environment and a fault hook run before each of its reads of the control topic.
   */
  IngressApp startAnotherIngress(Map<String, String> overrides, Runnable beforeControlRead) {
    Map<String, String> e = new LinkedHashMap<>(env);
    e.putAll(overrides);
    return IngressApp.start(
        IngressConfig.fromEnv(e).withPorts(0, 0),
        Metrics.newRegistry("ingress"),
        beforeControlRead);
  }

  int ingressAdminPort() {
    return ingress.adminPort();
  }

  URI webhookUri() {
    return webhookUri(ingress);
  }

  static URI webhookUri(IngressApp app) {
    return URI.create("http://127.0.0.1:" + app.port() + "/webhooks/sume");
  }

  /** Posts one signed Sume event to the ingress, as Sume does, and expects its 200. */
  void post(String runId, String requestId, Instant createdAt) throws Exception {
    HttpResponse<String> response = send(webhookUri(), runId, requestId, createdAt);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  /** Posts one signed Sume event to {@code uri}, as Sume does, and returns the answer. */
  HttpResponse<String> send(URI uri, String runId, String requestId, Instant createdAt)
      throws Exception {
    byte[] body = SumeEvents.event(runId, requestId, createdAt).type("run.updated").bytes();
    long ts = Instant.now().getEpochSecond();
    return HTTP.send(
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "application/json")
            .header("X-Sume-Timestamp", Long.toString(ts))
            .header("X-Sume-Signature", SumeSignatureVerifier.sign(secret, ts, body))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** {@code GET /runs/{id}} of processor 0, which answers or relays to the run's host. */
  HttpResponse<byte[]> getRun(String runId) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + processor(0).adminPort() + "/runs/" + runId))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  /**
   * Starts the sink on {@code sume.events}, writing into a new database of {@code postgres}, and
   * waits until it is ready (its migrations ran, its partitions are assigned). The tools run from
   * then on with the sink's settings too, as an operator's environment has them: {@code trace} and
   * {@code audit} read its database (D94).
   */
  Deployment startSink(Postgres postgres) {
    this.postgres = postgres;
    this.database = postgres.createDatabase(name.replace('-', '_'));
    Map<String, String> e = new LinkedHashMap<>(env);
    e.put("SINK_GROUP_ID", name + "-sink");
    e.put(SinkConfig.ENV_DATABASE_URL, postgres.jdbcUrl(database));
    e.put(SinkConfig.ENV_DATABASE_USER, postgres.username());
    if (postgres.password() != null) {
      e.put(SinkConfig.ENV_DATABASE_PASSWORD, postgres.password());
    }
    e.put("SINK_DATABASE_STARTUP_TIMEOUT_SECONDS", "30");
    sinkRegistry = Metrics.newRegistry("sink");
    sink = SinkApp.start(SinkConfig.fromEnv(e).withPort(0), sinkRegistry);
    sink.awaitReady(Duration.ofSeconds(60));
    env.putAll(e);
    return this;
  }

  /** The sink's meters (null without a sink). */
  PrometheusMeterRegistry sinkRegistry() {
    return sinkRegistry;
  }

  /** A connection to the sink's database. */
  Connection sinkDatabase() throws SQLException {
    return DriverManager.getConnection(
        postgres.jdbcUrl(database), postgres.username(), postgres.password());
  }

  ProcessorConfig processorConfig(int i) {
    return ProcessorConfig.fromEnv(processorEnv(i)).withPort(0);
  }

  private Map<String, String> processorEnv(int i) {
    Map<String, String> e = new LinkedHashMap<>(env);
    e.put("PROCESSOR_STATE_DIR", stateDirs.get(i).toString());
    // Static members, as deploy/k8s runs them: a swap must leave the group even so.
    e.put("PROCESSOR_GROUP_INSTANCE_ID", name + "-" + i);
    return e;
  }

  /**
   * Processor {@code i} in a JVM of its own (the caller kills or closes it), ready; its output in
   * {@code target/<deployment>-processor-<i>.log}.
   */
  ProcessorJvm startProcessorJvm(int i) {
    return ProcessorJvm.start(
        processorEnv(i), FreePorts.next(), Path.of("target", name + "-processor-" + i + ".log"));
  }

  Deployment startProcessor(int i) {
    ProcessorConfig config = processorConfig(i);
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    processors.set(
        i,
        ProcessorApp.start(
            config, new RedisDedup(config.redisDedupSettings(), registry), registry, faultHook));
    registries.set(i, registry);
    return this;
  }

  /** Processor {@code i}'s meters. */
  PrometheusMeterRegistry processorRegistry(int i) {
    return registries.get(i);
  }

  Deployment startProcessors() {
    for (int i = 0; i < processors.size(); i++) {
      startProcessor(i);
    }
    awaitProcessorsRunning(Duration.ofSeconds(90));
    return this;
  }

  /** Closes every processor (as a stop would: they stay in the group until the session ends). */
  Deployment stopProcessors() {
    for (int i = 0; i < processors.size(); i++) {
      if (processors.get(i) != null) {
        processors.get(i).close();
        processors.set(i, null);
      }
    }
    return this;
  }

  /** The control topic's latest generation of this pipeline, read anew. */
  Optional<Generation> latestGeneration() {
    try (ControlTopic.Reader r =
        new ControlTopic.Reader(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()),
            controlTopic,
            topics.webhooks())) {
      return r.latest(Duration.ofSeconds(30));
    }
  }

  /** Writes a control record as the tools do: the first half of a command that then died. */
  void writeControl(Generation g) {
    try (ControlTopic.Writer w =
        new ControlTopic.Writer(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()),
            controlTopic,
            topics.webhooks())) {
      w.write(g);
    }
  }

  /**
   * Generation {@code number}, PREPARING from {@code base} on {@code input}, as the tools write it.
   */
  static Generation preparing(
      Generation base, int number, Generation.Kind kind, String input, int partitions) {
    return new Generation(
        number,
        Generation.State.PREPARING,
        kind,
        base.baseApplicationId(),
        Generation.applicationId(base.baseApplicationId(), number),
        input,
        partitions,
        kind == Generation.Kind.GROW ? StateTopics.runsChangelog(base.applicationId()) : null,
        null,
        Instant.now(),
        base);
  }

  /** The Redis key prefix of this deployment's dedup markers. */
  String keyPrefix() {
    return env.get("DEDUP_KEY_PREFIX");
  }

  /** Closes every processor and starts it again on its state dir, as a supervisor would. */
  Deployment restartProcessors() {
    for (int i = 0; i < processors.size(); i++) {
      if (processors.get(i) != null) {
        processors.get(i).close();
      }
      startProcessor(i);
    }
    return this;
  }

  ProcessorApp processor(int i) {
    return processors.get(i);
  }

  /** Every processor runs Streams, RUNNING. */
  void awaitProcessorsRunning(Duration timeout) {
    await()
        .atMost(timeout)
        .until(
            () ->
                processors.stream()
                    .allMatch(
                        p ->
                            p != null
                                && p.streams() != null
                                && p.streams().state() == KafkaStreams.State.RUNNING));
  }

  /** Every processor runs generation {@code number}. */
  void awaitGeneration(int number, Duration timeout) {
    await()
        .atMost(timeout)
        .until(
            () ->
                processors.stream()
                    .allMatch(p -> p.generation() != null && p.generation().number() == number));
    awaitProcessorsRunning(timeout);
  }

  Generation generation() {
    return processors.get(0).generation();
  }

  /** The sum over the processors of the counters with this tag (over their other tags). */
  double count(String meter, String tag, String value) {
    double sum = 0;
    for (PrometheusMeterRegistry r : registries) {
      if (r != null) {
        sum += r.find(meter).tag(tag, value).counters().stream().mapToDouble(c -> c.count()).sum();
      }
    }
    return sum;
  }

  /** Runs one tools command line with this deployment's environment; prints what it printed. */
  ToolRun tool(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        ToolsMain.run(
            env,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            args);
    ToolRun run =
        new ToolRun(
            code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    System.out.println("$ runlane " + String.join(" ", args) + "  -> exit " + code);
    System.out.print(run.out());
    System.out.print(run.err());
    return run;
  }

  record ToolRun(int code, String out, String err) {}

  SumeSimulator simulator(long seed) {
    return new SumeSimulator(SumeSimulator.Settings.of(webhookUri(), secret, 1000, seed));
  }

  /**
   * A simulator delivering {@code events} at {@code rate} a second, returned once Sume has {@code
   * acked} of them acknowledged.
   */
  SumeSimulator simulatorPast(long seed, double rate, long events, long acked) {
    SumeSimulator simulator = simulator(seed);
    try {
      simulator.start(rate, events, Duration.ofMinutes(2));
      awaitAcked(simulator, acked);
      return simulator;
    } catch (RuntimeException | Error e) {
      simulator.close();
      throw e;
    }
  }

  /** Waits up to a minute for Sume to have {@code acked} events acknowledged. */
  static void awaitAcked(SumeSimulator simulator, long acked) {
    await().atMost(Duration.ofSeconds(60)).until(() -> simulator.ledger().ackedEvents() >= acked);
  }

  /** Waits until the newest generation of the control topic is active. */
  void awaitActiveGeneration(Duration timeout) {
    await()
        .atMost(timeout)
        .until(
            () -> latestGeneration().map(g -> g.state() == Generation.State.ACTIVE).orElse(false));
  }

  /** Once the simulator is idle, the verifier's report, printed; it must have passed. */
  Report verifiedOnceIdle(SumeSimulator simulator) throws InterruptedException {
    return verifiedOnceIdle(simulator, Duration.ZERO);
  }

  /** As {@link #verifiedOnceIdle(SumeSimulator)}, also checking a reorder window's order (D46). */
  Report verifiedOnceIdle(SumeSimulator simulator, Duration reorderWindow)
      throws InterruptedException {
    assertThat(simulator.awaitIdle(Duration.ofSeconds(120))).as("simulator idle").isTrue();
    return passed(verify(simulator, reorderWindow));
  }

  /** The report, printed; it must have passed. */
  static Report passed(Report report) {
    System.out.println(report.summary());
    assertThat(report.passed()).as(report.summary()).isTrue();
    return report;
  }

  /** The verifier, pointed at the generation the processors run now. */
  Report verify(SumeSimulator simulator) {
    return verify(simulator, Duration.ZERO);
  }

  /** As {@link #verify(SumeSimulator)}, also checking a reorder window's order (D46). */
  Report verify(SumeSimulator simulator, Duration reorderWindow) {
    Generation g = generation();
    TopicNames now =
        new TopicNames(g.input(), topics.dlq(), topics.events(), topics.stale(), topics.runs());
    URI processorUri = URI.create("http://127.0.0.1:" + processors.get(0).adminPort());
    return new PipelineVerifier(
            new PipelineVerifier.Target(
                infra.bootstrapServers(),
                now,
                processorUri,
                g.applicationId(),
                null,
                env.get("TOPIC_DECISIONS")))
        .verify(simulator.ledger(), Duration.ofSeconds(90), reorderWindow);
  }

  @Override
  public void close() {
    if (sink != null) {
      sink.close();
      sinkRegistry.close();
    }
    for (ProcessorApp p : processors) {
      if (p != null) {
        p.close();
      }
    }
    if (ingress != null) {
      ingress.close();
    }
  }
}
