package dev.runlane.embedded;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-node KRaft Kafka (combined broker and controller) running inside this JVM.
 *
 * <p>The log dir is formatted once with a random cluster id; {@link #stop()} and {@link #restart()}
 * keep the data and the ports, so a test can kill the broker under its clients and bring it back.
 * Several instances may run in one JVM: each gets its own node id, ports and dir.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);

  /** Distinct node ids keep per-node JMX names apart when several brokers share a JVM. */
  private static final AtomicInteger NEXT_NODE_ID = new AtomicInteger(1);

  private static final String CONTROLLER_LISTENER = "CONTROLLER";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration PROBE_PAUSE = Duration.ofMillis(100);
  private static final int START_ATTEMPTS = 3;

  private final int nodeId;
  private final int brokerPort;
  private final int controllerPort;
  private final Path baseDir;
  private final Secured secured; // null: plaintext only
  private final Map<String, String> brokerConfig;

  private KafkaRaftServer server; // guarded by this
  private boolean closed; // guarded by this

  /**
   * A second listener that needs SASL_SSL with SCRAM-SHA-512, as MSK, Confluent Cloud, Aiven or a
   * Strimzi SCRAM listener do, next to the plaintext one the broker itself uses.
   *
   * @param bootstrapServers {@code 127.0.0.1:PORT} of the SASL_SSL listener
   * @param tls the broker's certificate and a trust store for clients
   * @param username a SCRAM user the broker knows
   * @param password its password
   */
  public record Secured(String bootstrapServers, TlsStores tls, String username, String password) {
    /** A JAAS config line for this user. */
    public String jaasConfig(String password) {
      return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
          + username
          + "\" password=\""
          + password
          + "\";";
    }
  }

  private EmbeddedKafka(Map<String, String> overrides) {
    this(overrides, false);
  }

  private EmbeddedKafka(Map<String, String> overrides, boolean withSecuredListener) {
    this.nodeId = NEXT_NODE_ID.getAndIncrement();
    this.brokerPort = FreePorts.next();
    int candidate = FreePorts.next();
    while (candidate == brokerPort) {
      candidate = FreePorts.next();
    }
    this.controllerPort = candidate;
    try {
      this.baseDir = Files.createTempDirectory("runlane-kafka-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a temp dir for the embedded broker", e);
    }
    if (withSecuredListener) {
      int port = FreePorts.next();
      while (port == brokerPort || port == controllerPort) {
        port = FreePorts.next();
      }
      this.secured =
          new Secured(
              "127.0.0.1:" + port,
              TlsStores.generate(baseDir.resolve("tls")),
              "runlane",
              "scram-" + Long.toHexString(System.nanoTime()));
    } else {
      this.secured = null;
    }
    this.brokerConfig = brokerConfig(overrides);
  }

  /**
   * Starts a broker that also listens with SASL_SSL and SCRAM-SHA-512 (see {@link #secured()}),
   * with one SCRAM user created.
   */
  public static EmbeddedKafka startSecured() {
    EmbeddedKafka kafka = new EmbeddedKafka(Map.of(), true);
    try {
      kafka.format();
      kafka.startServer();
      kafka.createScramUser();
      return kafka;
    } catch (RuntimeException | Error e) {
      kafka.close();
      throw e;
    }
  }

  /** The SASL_SSL listener, or null if the broker has none. */
  public Secured secured() {
    return secured;
  }

  private void createScramUser() {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
      admin
          .alterUserScramCredentials(
              List.of(
                  new UserScramCredentialUpsertion(
                      secured.username(),
                      new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                      secured.password())))
          .all()
          .get(30, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot create the SCRAM user", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted creating the SCRAM user", e);
    }
  }

  /** Formats a fresh log dir and starts a broker on free loopback ports; returns when it serves. */
  public static EmbeddedKafka start() {
    return start(Map.of());
  }

  /**
   * Like {@link #start()}, with broker settings that replace the defaults (the listener, node and
   * directory settings are not meant to be overridden).
   */
  public static EmbeddedKafka start(Map<String, String> brokerOverrides) {
    RuntimeException last = null;
    // Free ports are picked before the broker binds them; another process may win the race.
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      EmbeddedKafka kafka = new EmbeddedKafka(brokerOverrides);
      try {
        kafka.format();
        kafka.startServer();
        return kafka;
      } catch (RuntimeException e) {
        kafka.close();
        LOG.warn("embedded Kafka start attempt {} of {} failed", attempt, START_ATTEMPTS, e);
        last = e;
      } catch (Error e) {
        kafka.close();
        throw e;
      }
    }
    throw last;
  }

  /** {@code 127.0.0.1:PORT}; the same across {@link #stop()} and {@link #restart()}. */
  public String bootstrapServers() {
    return "127.0.0.1:" + brokerPort;
  }

  /** The directory holding the broker's data (metadata log and topic partitions). */
  public Path logDir() {
    return baseDir.resolve("data");
  }

  /** Whether the broker is currently started. */
  public synchronized boolean isRunning() {
    return server != null;
  }

  /** Shuts the broker down, keeping its data and ports. No-op when it is not running. */
  public synchronized void stop() {
    if (server == null) {
      return;
    }
    KafkaRaftServer running = server;
    server = null;
    long started = System.nanoTime();
    running.shutdown();
    running.awaitShutdown();
    LOG.debug(
        "embedded Kafka {} stopped in {} ms",
        bootstrapServers(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
  }

  /** Starts the broker again on the same ports with the same data; returns when it serves. */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("embedded Kafka " + bootstrapServers() + " is closed");
    }
    if (server != null) {
      stop();
    }
    startServer();
  }

  /** Stops the broker and deletes its data. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      stop();
    } finally {
      deleteRecursively(baseDir);
    }
  }

  @Override
  public String toString() {
    return "EmbeddedKafka[" + bootstrapServers() + ", node " + nodeId + ", " + baseDir + "]";
  }

  private Map<String, String> brokerConfig(Map<String, String> overrides) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("process.roles", "broker,controller");
    c.put("node.id", Integer.toString(nodeId));
    c.put("controller.quorum.voters", nodeId + "@127.0.0.1:" + controllerPort);
    c.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:"
            + brokerPort
            + ","
            + CONTROLLER_LISTENER
            + "://127.0.0.1:"
            + controllerPort);
    c.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    c.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    if (secured != null) {
      c.put("listeners", c.get("listeners") + ",SASL_SSL://" + secured.bootstrapServers());
      c.put(
          "advertised.listeners",
          c.get("advertised.listeners") + ",SASL_SSL://" + secured.bootstrapServers());
      c.put(
          "listener.security.protocol.map",
          "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL");
      c.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
      c.put(
          "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
          "org.apache.kafka.common.security.scram.ScramLoginModule required;");
      c.put("listener.name.sasl_ssl.ssl.keystore.type", "PKCS12");
      c.put("listener.name.sasl_ssl.ssl.keystore.location", secured.tls().keyStore().toString());
      c.put("listener.name.sasl_ssl.ssl.keystore.password", secured.tls().password());
      c.put("listener.name.sasl_ssl.ssl.key.password", secured.tls().password());
    }
    c.put("controller.listener.names", CONTROLLER_LISTENER);
    c.put("inter.broker.listener.name", "PLAINTEXT");
    c.put("log.dirs", logDir().toString());
    c.put("metadata.log.dir", logDir().toString());

    // One node: every internal topic has one replica, transactions and EOS still work.
    c.put("offsets.topic.replication.factor", "1");
    c.put("offsets.topic.num.partitions", "5");
    c.put("transaction.state.log.replication.factor", "1");
    c.put("transaction.state.log.min.isr", "1");
    c.put("transaction.state.log.num.partitions", "5");
    c.put("share.coordinator.state.topic.replication.factor", "1");
    c.put("share.coordinator.state.topic.min.isr", "1");
    c.put("share.coordinator.state.topic.num.partitions", "1");
    c.put("default.replication.factor", "1");
    c.put("min.insync.replicas", "1");
    c.put("num.partitions", "1");
    c.put("auto.create.topics.enable", "false");
    c.put("group.initial.rebalance.delay.ms", "0");
    c.put("group.streams.initial.rebalance.delay.ms", "0");

    // Small and few: this runs on laptops and 2-core CI machines, often twice per JVM.
    c.put("num.network.threads", "2");
    c.put("num.io.threads", "2");
    c.put("background.threads", "2");
    c.put("num.recovery.threads.per.data.dir", "1");
    c.put("log.cleaner.threads", "1");
    c.put("log.cleaner.dedupe.buffer.size", Integer.toString(4 * 1024 * 1024));
    c.put("log.index.size.max.bytes", Integer.toString(1024 * 1024));
    c.put("log.segment.bytes", Integer.toString(16 * 1024 * 1024));
    // With 16 MiB segments, every compacted partition (Streams changelogs, sume.runs) becomes
    // cleanable within the same minute, and the cleaner then took a whole core for 3-4 s: on a
    // machine shared with the services, the largest source of the e2e benchmark's stalls (D18).
    c.put("log.cleaner.io.max.bytes.per.second", Double.toString(16 * 1024 * 1024));
    c.putAll(overrides);
    return Map.copyOf(c);
  }

  private void format() {
    try {
      Files.createDirectories(logDir());
      new Formatter()
          .setPrintStream(
              new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8))
          .setNodeId(nodeId)
          .setClusterId(Uuid.randomUuid().toString())
          .setDirectories(List.of(logDir().toString()))
          .setMetadataLogDirectory(logDir().toString())
          .setControllerListenerName(CONTROLLER_LISTENER)
          .run();
    } catch (Exception e) {
      throw new IllegalStateException("cannot format the embedded broker's log dir " + logDir(), e);
    }
  }

  private synchronized void startServer() {
    long started = System.nanoTime();
    Properties props = new Properties();
    props.putAll(brokerConfig);
    KafkaRaftServer candidate =
        new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
    try {
      candidate.startup();
      awaitServing();
    } catch (RuntimeException | Error e) {
      try {
        candidate.shutdown();
        candidate.awaitShutdown();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    server = candidate;
    LOG.info(
        "embedded Kafka serving on {} (started in {} ms, data in {})",
        bootstrapServers(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
        baseDir);
  }

  /** Polls describeCluster until this broker is listed (registered and unfenced). */
  private void awaitServing() {
    Map<String, Object> adminConfig =
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrapServers(),
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
            (int) PROBE_TIMEOUT.toMillis(),
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            (int) PROBE_TIMEOUT.toMillis(),
            AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG,
            200);
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    Exception last = null;
    try (Admin admin = Admin.create(adminConfig)) {
      while (System.nanoTime() < deadline) {
        try {
          var nodes =
              admin
                  .describeCluster(
                      new DescribeClusterOptions().timeoutMs((int) PROBE_TIMEOUT.toMillis()))
                  .nodes()
                  .get(PROBE_TIMEOUT.toMillis() + 500, TimeUnit.MILLISECONDS);
          if (nodes.stream().anyMatch(n -> n.id() == nodeId)) {
            return;
          }
        } catch (ExecutionException | TimeoutException e) {
          last = e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for the embedded broker", e);
        }
        LockSupport.parkNanos(PROBE_PAUSE.toNanos()); // not listed yet, or refused: try again
      }
    }
    throw new IllegalStateException(
        "embedded Kafka on " + bootstrapServers() + " did not serve within " + READY_TIMEOUT, last);
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(EmbeddedKafka::deleteQuietly);
    } catch (IOException e) {
      LOG.warn("cannot delete {}", dir, e);
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      LOG.warn("cannot delete {}", path, e);
    }
  }
}
