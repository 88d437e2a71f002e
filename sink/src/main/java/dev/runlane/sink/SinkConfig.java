package dev.runlane.sink;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Every setting of the sink, parsed eagerly from the environment; all problems are reported at once
 * (see {@link EnvReader}).
 *
 * @param bootstrapServers Kafka
 * @param topic the topic read: {@code TOPIC_EVENTS}
 * @param groupId the consumer group, also the key of the offsets stored in the database
 * @param maxPollRecords records per poll, at most: one database transaction each
 * @param databaseUrl {@code jdbc:postgresql://...}
 * @param databaseUser the database user
 * @param databasePassword its password, if the database wants one
 * @param databaseStartupTimeout how long the start waits for the database (migrations need it)
 * @param port the admin port (health, metrics)
 * @param kafkaClient {@code KAFKA_CLIENT_*}
 */
public record SinkConfig(
    String bootstrapServers,
    String topic,
    String groupId,
    int maxPollRecords,
    String databaseUrl,
    String databaseUser,
    Optional<Secret> databasePassword,
    Duration databaseStartupTimeout,
    int port,
    KafkaClientSettings kafkaClient) {

  public static final String ENV_DATABASE_URL = "SINK_DATABASE_URL";
  public static final String ENV_DATABASE_USER = "SINK_DATABASE_USER";
  public static final String ENV_DATABASE_PASSWORD = "SINK_DATABASE_PASSWORD";

  private static final Pattern GROUP_ID = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

  public static SinkConfig fromEnv(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    String url = r.required(ENV_DATABASE_URL);
    // The driver takes credentials in the URL too; they belong in the two variables, where a
    // Kubernetes Secret can hold the password alone and no log line shows it.
    if (!url.isEmpty() && !url.startsWith("jdbc:postgresql://")) {
      r.problem(ENV_DATABASE_URL + " must start with jdbc:postgresql://");
    } else if (url.toLowerCase(Locale.ROOT).contains("password=")) {
      r.problem(ENV_DATABASE_URL + " must not hold a password: use " + ENV_DATABASE_PASSWORD);
    }
    String groupId = r.string("SINK_GROUP_ID", "runlane-sink");
    if (!GROUP_ID.matcher(groupId).matches()) {
      r.problem("SINK_GROUP_ID must be 1-249 characters of a-z, A-Z, 0-9, '.', '_' and '-'");
    }
    SinkConfig config =
        new SinkConfig(
            r.string("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
            TopicNames.fromEnv(r).events(),
            groupId,
            r.integer("SINK_MAX_POLL_RECORDS", 2000, 1, 50_000),
            url,
            r.string(ENV_DATABASE_USER, "runlane"),
            r.isSet(ENV_DATABASE_PASSWORD)
                ? Optional.of(Secret.of(r.string(ENV_DATABASE_PASSWORD, "")))
                : Optional.empty(),
            r.seconds("SINK_DATABASE_STARTUP_TIMEOUT_SECONDS", 60, 1, 3600),
            r.port("SINK_PORT", 9082),
            KafkaClientSettings.fromEnv(r));
    r.throwIfInvalid();
    return config;
  }

  /**
   * The same settings on another admin port; 0 binds a free one. For embedding (tests, the local
   * stack, benchmarks), where the environment's 1-65535 rule is too strict.
   */
  public SinkConfig withPort(int port) {
    return new SinkConfig(
        bootstrapServers,
        topic,
        groupId,
        maxPollRecords,
        databaseUrl,
        databaseUser,
        databasePassword,
        databaseStartupTimeout,
        port,
        kafkaClient);
  }
}
