package dev.runlane.embedded;

import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/** The broker and Redis of one test JVM; closed by JUnit when the root context closes. */
final class SharedInfra implements Infra, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SharedInfra.class);

  static final String KIND_TESTCONTAINERS = "testcontainers";
  static final String KIND_EMBEDDED = "embedded";

  /** {@code auto} (default), {@code embedded} or {@code testcontainers}. */
  static final String KAFKA_MODE_PROPERTY = "runlane.it.kafka";

  static final String KAFKA_MODE_ENV = "RUNLANE_IT_KAFKA";
  static final String KAFKA_IMAGE_PROPERTY = "runlane.it.kafka.image";
  static final String KAFKA_IMAGE_ENV = "RUNLANE_IT_KAFKA_IMAGE";

  /** {@code auto} (default), {@code embedded} or {@code testcontainers}, as for Kafka. */
  static final String POSTGRES_MODE_PROPERTY = "runlane.it.postgres";

  static final String POSTGRES_MODE_ENV = "RUNLANE_IT_POSTGRES";
  static final String POSTGRES_IMAGE_PROPERTY = "runlane.it.postgres.image";
  static final String POSTGRES_IMAGE_ENV = "RUNLANE_IT_POSTGRES_IMAGE";

  /**
   * The image of the Kafka version the project builds against ({@code kafka.version}, as the
   * kafka-clients jar reports it; {@code AppInfoParser} moved to {@code internals} in Kafka 4.4).
   */
  static final String DEFAULT_KAFKA_IMAGE = "apache/kafka:" + AppInfoParser.getVersion();

  private static final char[] SUFFIX_ALPHABET =
      "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
  private static final int SUFFIX_LENGTH = 8;

  private final String bootstrapServers;
  private final String kafkaKind;
  private final AutoCloseable kafka;
  private final EmbeddedRedis redis;
  private Postgres postgres; // guarded by this

  private SharedInfra(
      String bootstrapServers, String kafkaKind, AutoCloseable kafka, EmbeddedRedis redis) {
    this.bootstrapServers = bootstrapServers;
    this.kafkaKind = kafkaKind;
    this.kafka = kafka;
    this.redis = redis;
  }

  static SharedInfra start() {
    EmbeddedRedis redis = EmbeddedRedis.shared();
    SharedInfra infra = startKafka(redis);
    LOG.info(
        "integration-test infrastructure: Kafka {} ({}), Redis {}",
        infra.bootstrapServers,
        infra.kafkaKind,
        redis);
    return infra;
  }

  private static SharedInfra startKafka(EmbeddedRedis redis) {
    Map<String, String> env = System.getenv();
    String mode = mode(KAFKA_MODE_PROPERTY, KAFKA_MODE_ENV, env);
    if (tryDocker(mode, env)) {
      String image = setting(KAFKA_IMAGE_PROPERTY, KAFKA_IMAGE_ENV, env, DEFAULT_KAFKA_IMAGE);
      try {
        KafkaContainer container = startContainer(image);
        return new SharedInfra(
            container.getBootstrapServers(), KIND_TESTCONTAINERS, container, redis);
      } catch (RuntimeException e) {
        if (mode.equals("testcontainers")) {
          throw e;
        }
        LOG.warn("Kafka container {} did not start; using the embedded broker", image, e);
      }
    }
    EmbeddedKafka embedded = EmbeddedKafka.start();
    return new SharedInfra(embedded.bootstrapServers(), KIND_EMBEDDED, embedded, redis);
  }

  @SuppressWarnings("resource") // closed by SharedInfra.close()
  private static KafkaContainer startContainer(String image) {
    KafkaContainer container =
        new KafkaContainer(DockerImageName.parse(image))
            .withEnv("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "false")
            .withEnv("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR", "1")
            .withEnv("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR", "1")
            .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0");
    try {
      container.start();
      return container;
    } catch (RuntimeException e) {
      container.close();
      throw e;
    }
  }

  private static String setting(
      String property, String envName, Map<String, String> env, String fallback) {
    String fromProperty = System.getProperty(property);
    if (fromProperty != null && !fromProperty.isBlank()) {
      return fromProperty.trim();
    }
    String fromEnv = env.get(envName);
    return fromEnv != null && !fromEnv.isBlank() ? fromEnv.trim() : fallback;
  }

  static String uniqueName(String prefix, RandomGenerator random) {
    StringBuilder name = new StringBuilder(prefix);
    if (!prefix.isEmpty() && "-._:/".indexOf(prefix.charAt(prefix.length() - 1)) < 0) {
      name.append('-');
    }
    for (int i = 0; i < SUFFIX_LENGTH; i++) {
      name.append(SUFFIX_ALPHABET[random.nextInt(SUFFIX_ALPHABET.length)]);
    }
    return name.toString();
  }

  @Override
  public String bootstrapServers() {
    return bootstrapServers;
  }

  @Override
  public URI redisUri() {
    return redis.uri();
  }

  @Override
  public synchronized Postgres postgres() {
    if (postgres == null) {
      postgres = startPostgres();
      LOG.info("integration-test PostgreSQL: {} ({})", postgres.jdbcUrl(""), postgres.kind());
    }
    return postgres;
  }

  /**
   * The mode {@code property} (or {@code envName}) names: {@code embedded}, {@code testcontainers}
   * (a container or a failure), or {@code auto} (a container when Docker answers, else embedded).
   */
  private static String mode(String property, String envName, Map<String, String> env) {
    String mode = setting(property, envName, env, "auto").toLowerCase(Locale.ROOT);
    if (!List.of("auto", "embedded", "testcontainers").contains(mode)) {
      throw new IllegalArgumentException(
          property + " must be auto, embedded or testcontainers, got " + mode);
    }
    return mode;
  }

  private static boolean tryDocker(String mode, Map<String, String> env) {
    return switch (mode) {
      case "embedded" -> false;
      case "testcontainers" -> true;
      default -> DockerProbe.dockerAvailable(env);
    };
  }

  private static Postgres startPostgres() {
    Map<String, String> env = System.getenv();
    String mode = mode(POSTGRES_MODE_PROPERTY, POSTGRES_MODE_ENV, env);
    if (tryDocker(mode, env)) {
      String image =
          setting(
              POSTGRES_IMAGE_PROPERTY, POSTGRES_IMAGE_ENV, env, ContainerPostgres.DEFAULT_IMAGE);
      try {
        return ContainerPostgres.start(image);
      } catch (RuntimeException e) {
        if (mode.equals("testcontainers")) {
          throw e;
        }
        LOG.warn("PostgreSQL container {} did not start; using the embedded server", image, e);
      }
    }
    return EmbeddedPostgres.start();
  }

  @Override
  public String kafkaKind() {
    return kafkaKind;
  }

  @Override
  public String uniqueName(String prefix) {
    return uniqueName(prefix, ThreadLocalRandom.current());
  }

  /**
   * Stops the broker and PostgreSQL; the shared Redis lives until the JVM exits (other users may
   * hold it).
   */
  @Override
  public void close() {
    LOG.debug("stopping integration-test Kafka {} ({})", bootstrapServers, kafkaKind);
    synchronized (this) {
      if (postgres instanceof AutoCloseable closeable) {
        try {
          closeable.close();
        } catch (Exception e) {
          LOG.warn("cannot stop PostgreSQL", e);
        }
      }
    }
    try {
      kafka.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop Kafka " + bootstrapServers, e);
    }
  }

  @Override
  public String toString() {
    return "Infra[kafka="
        + bootstrapServers
        + " ("
        + kafkaKind
        + "), redis="
        + EmbeddedRedis.redacted(redis.uri())
        + "]";
  }
}
