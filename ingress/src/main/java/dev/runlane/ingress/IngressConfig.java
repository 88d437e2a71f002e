package dev.runlane.ingress;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.common.signature.StandardWebhooksVerifier;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every setting of the ingress, parsed eagerly from the environment; all problems are reported at
 * once (see {@link EnvReader}). {@link #toString()} shows secrets as {@code ***}.
 *
 * @param bootstrapServers {@code KAFKA_BOOTSTRAP_SERVERS}
 * @param sumeSecrets {@code SUME_SIGNING_SECRETS}, newest first (required)
 * @param standardWebhooksSecrets {@code STANDARD_WEBHOOKS_SECRETS}; empty = no {@code
 *     /webhooks/standard} route
 * @param timestampTolerance {@code SUME_TIMESTAMP_TOLERANCE_SECONDS}, both directions
 * @param host {@code INGRESS_HOST}, the address the webhook and admin servers bind
 * @param port {@code INGRESS_PORT}; 0 (tests only) picks a free port
 * @param adminPort {@code INGRESS_ADMIN_PORT}; 0 (tests only) picks a free port
 * @param maxBodyBytes {@code INGRESS_MAX_BODY_BYTES}
 * @param ackTimeout {@code INGRESS_ACK_TIMEOUT_MS}: the deadline for the broker ack, below Sume's
 *     10 s
 * @param retryAfter {@code INGRESS_RETRY_AFTER_SECONDS}: the {@code Retry-After} of a 503
 * @param shutdownGrace {@code INGRESS_SHUTDOWN_GRACE_MS}: how long in-flight requests may take
 *     after SIGTERM
 * @param startupTimeout {@code KAFKA_STARTUP_TIMEOUT_SECONDS}: how long start-up waits for Kafka
 * @param producerMaxBlock {@code INGRESS_PRODUCER_MAX_BLOCK_MS}: the most a send may block an event
 *     loop (buffer full)
 * @param producerLinger {@code INGRESS_PRODUCER_LINGER_MS}: how long a record waits to share a
 *     batch
 * @param producerCompression {@code INGRESS_PRODUCER_COMPRESSION}: the producer's compression type
 * @param eventLoops {@code INGRESS_EVENT_LOOPS}
 * @param topics {@code TOPIC_*}
 * @param topicSettings {@code TOPIC_PARTITIONS}, {@code TOPIC_REPLICATION_FACTOR}
 * @param controlTopic {@code TOPIC_CONTROL}: where the operator tools say which input to write
 * @param controlStaleAfter {@code INGRESS_CONTROL_STALE_MS}: how old the last read of the control
 *     topic may be while webhooks are written; older, they are answered 503 (D71)
 * @param kafkaClient {@code KAFKA_CLIENT_*}: security and other settings for every Kafka client
 * @param topicPolicy {@code TOPIC_MIN_INSYNC_REPLICAS}, {@code TOPIC_*_RETENTION_MS}
 */
public record IngressConfig(
    String bootstrapServers,
    List<Secret> sumeSecrets,
    List<Secret> standardWebhooksSecrets,
    Duration timestampTolerance,
    String host,
    int port,
    int adminPort,
    int maxBodyBytes,
    Duration ackTimeout,
    Duration retryAfter,
    Duration shutdownGrace,
    Duration startupTimeout,
    Duration producerMaxBlock,
    Duration producerLinger,
    Compression producerCompression,
    int eventLoops,
    TopicNames topics,
    TopicSettings topicSettings,
    String controlTopic,
    Duration controlStaleAfter,
    KafkaClientSettings kafkaClient,
    TopicPolicy topicPolicy) {

  /** Sume gives each delivery attempt 10 s; the ack deadline must stay below it. */
  public static final Duration SUME_ATTEMPT_TIMEOUT = Duration.ofSeconds(10);

  public static final int DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

  private static final Logger log = LoggerFactory.getLogger(IngressConfig.class);

  public IngressConfig {
    sumeSecrets = List.copyOf(sumeSecrets);
    standardWebhooksSecrets = List.copyOf(standardWebhooksSecrets);
  }

  /**
   * Reads the environment.
   *
   * @throws ConfigException naming every bad or missing variable
   */
  public static IngressConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    String bootstrap = r.string("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092");
    List<Secret> sume = r.secrets("SUME_SIGNING_SECRETS");
    List<Secret> standard =
        r.isSet("STANDARD_WEBHOOKS_SECRETS") ? r.secrets("STANDARD_WEBHOOKS_SECRETS") : List.of();
    if (!standard.isEmpty()) {
      try {
        new StandardWebhooksVerifier(standard, Duration.ZERO, Clock.systemUTC());
      } catch (IllegalArgumentException e) {
        r.problem("STANDARD_WEBHOOKS_SECRETS: " + e.getMessage()); // names a position, no value
      }
    }
    Duration tolerance = r.seconds("SUME_TIMESTAMP_TOLERANCE_SECONDS", 300, 1, 7 * 86_400);
    String host = r.string("INGRESS_HOST", "0.0.0.0");
    int port = r.port("INGRESS_PORT", 8080);
    int adminPort = r.port("INGRESS_ADMIN_PORT", 9080);
    int maxBody =
        r.integer("INGRESS_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, 1024, 16 * 1024 * 1024);
    // Below Sume's 10 s per attempt, so that a slow broker gets a 503 before Sume gives up.
    Duration ackTimeout =
        r.millis("INGRESS_ACK_TIMEOUT_MS", 8000, 500, SUME_ATTEMPT_TIMEOUT.toMillis() - 1);
    Duration retryAfter = r.seconds("INGRESS_RETRY_AFTER_SECONDS", 5, 1, 3600);
    Duration grace = r.millis("INGRESS_SHUTDOWN_GRACE_MS", 10_000, 0, 300_000);
    Duration startup = r.seconds("KAFKA_STARTUP_TIMEOUT_SECONDS", 60, 1, 3600);
    Duration maxBlock = r.millis("INGRESS_PRODUCER_MAX_BLOCK_MS", 20, 0, 100);
    // Every request waits out the linger before its ack (batches rarely fill at 12 partitions):
    // 2 ms instead of Kafka's 5; 1 ms cost the whole pipeline ~10% more CPU (D17).
    Duration linger = r.millis("INGRESS_PRODUCER_LINGER_MS", 2, 0, 100);
    Compression compression =
        r.enumValue("INGRESS_PRODUCER_COMPRESSION", Compression.class, Compression.LZ4);
    int loops =
        r.integer(
            "INGRESS_EVENT_LOOPS", Math.max(1, Runtime.getRuntime().availableProcessors()), 1, 256);
    TopicNames topics = TopicNames.fromEnv(r);
    TopicSettings settings = TopicSettings.fromEnv(r);
    String control = ControlTopic.nameFromEnv(r);
    // Well below how long a grow waits for an ingress gone silent; several missed reads (D71).
    Duration staleAfter = r.millis("INGRESS_CONTROL_STALE_MS", 10_000, 2_000, 60_000);
    KafkaClientSettings kafkaClient = KafkaClientSettings.fromEnv(r);
    TopicPolicy topicPolicy = TopicPolicy.fromEnv(r);
    if (port == adminPort) {
      r.problem("INGRESS_PORT and INGRESS_ADMIN_PORT must differ (both " + port + ")");
    }
    if (grace.compareTo(ackTimeout) < 0) {
      r.warn(
          "INGRESS_SHUTDOWN_GRACE_MS="
              + grace.toMillis()
              + " is shorter than INGRESS_ACK_TIMEOUT_MS="
              + ackTimeout.toMillis()
              + ": requests in flight at shutdown may be cut off without an answer");
    }
    r.throwIfInvalid();
    r.warnings().forEach(w -> log.warn("risky configuration: {}", w));
    return new IngressConfig(
        bootstrap,
        sume,
        standard,
        tolerance,
        host,
        port,
        adminPort,
        maxBody,
        ackTimeout,
        retryAfter,
        grace,
        startup,
        maxBlock,
        linger,
        compression,
        loops,
        topics,
        settings,
        control,
        staleAfter,
        kafkaClient,
        topicPolicy);
  }

  /** The same settings on other ports (0 = a free port; for tests and the one-JVM stack). */
  public IngressConfig withPorts(int newPort, int newAdminPort) {
    return new IngressConfig(
        bootstrapServers,
        sumeSecrets,
        standardWebhooksSecrets,
        timestampTolerance,
        host,
        newPort,
        newAdminPort,
        maxBodyBytes,
        ackTimeout,
        retryAfter,
        shutdownGrace,
        startupTimeout,
        producerMaxBlock,
        producerLinger,
        producerCompression,
        eventLoops,
        topics,
        topicSettings,
        controlTopic,
        controlStaleAfter,
        kafkaClient,
        topicPolicy);
  }
}
