package dev.runlane.common.kafka;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SslAuthenticationException;

/**
 * The Kafka client settings an operator gives every client of a service (its producer, Streams and
 * the clients Streams makes, admin clients, the control topic's reader) and of the operator tools:
 * security protocol, SASL, TLS stores, and any other client property.
 *
 * <p>Read from {@code KAFKA_CLIENT_<PROPERTY>} variables, the property's name upper-cased with
 * {@code .} as {@code _} (as Confluent's and Strimzi's images map {@code KAFKA_*}), e.g. {@code
 * KAFKA_CLIENT_SECURITY_PROTOCOL=SASL_SSL} is {@code security.protocol}, and from a properties file
 * named by {@code KAFKA_CLIENT_PROPERTIES_FILE} (the variables win). Every property is checked at
 * start: it must be a producer, consumer or admin setting, of the right type, not one runlane sets
 * itself for a guarantee, and a TLS store it names must be readable. Password-type values (JAAS
 * config, store and key passwords) are held as {@link Secret}s: {@link #toString()} and every
 * message show them as {@code ***}.
 */
public final class KafkaClientSettings {
  public static final String ENV_PREFIX = "KAFKA_CLIENT_";
  public static final String ENV_FILE = "KAFKA_CLIENT_PROPERTIES_FILE";

  /**
   * Set by runlane for its guarantees, its wiring, or through a variable of its own; an override
   * would break them (acks and idempotence: G1; isolation and transactions: G2; the ack deadline
   * the producer's timeouts derive from: G6). The value says what to do instead.
   */
  static final Map<String, String> RESERVED =
      Map.ofEntries(
          Map.entry(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "use KAFKA_BOOTSTRAP_SERVERS"),
          Map.entry(ProducerConfig.ACKS_CONFIG, "acks=all is what 2xx promises (G1)"),
          Map.entry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "G1 depends on it"),
          Map.entry(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "exactly-once sets it (G2)"),
          Map.entry(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, "the record formats depend on it"),
          Map.entry(
              ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, "the record formats depend on it"),
          Map.entry(ProducerConfig.PARTITIONER_CLASS_CONFIG, "runs are partitioned by key (G3)"),
          Map.entry(
              ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, "the record formats depend on it"),
          Map.entry(
              ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, "the record formats depend on it"),
          Map.entry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "exactly-once sets it (G2)"),
          Map.entry(ConsumerConfig.GROUP_ID_CONFIG, "use PROCESSOR_APPLICATION_ID"),
          Map.entry(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "use PROCESSOR_GROUP_INSTANCE_ID"),
          Map.entry(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "offsets are committed by runlane"),
          Map.entry(
              ProducerConfig.COMPRESSION_TYPE_CONFIG,
              "use INGRESS_PRODUCER_COMPRESSION or" + " PROCESSOR_PRODUCER_COMPRESSION"),
          Map.entry(ProducerConfig.LINGER_MS_CONFIG, "use INGRESS_PRODUCER_LINGER_MS"),
          Map.entry(ProducerConfig.MAX_BLOCK_MS_CONFIG, "use INGRESS_PRODUCER_MAX_BLOCK_MS"),
          Map.entry(
              ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
              "derived from INGRESS_ACK_TIMEOUT_MS" + " (G6)"),
          Map.entry(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "derived from the body limits"),
          Map.entry(
              ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "derived from INGRESS_ACK_TIMEOUT_MS (G6)"),
          Map.entry(ProducerConfig.RETRIES_CONFIG, "idempotent retries until the deadline (G1)"),
          Map.entry(
              ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
              "at most 5 keeps the idempotent producer's order (G1, G3)"));

  private static final List<ConfigDef> DEFS =
      List.of(
          ProducerConfig.configDef(), ConsumerConfig.configDef(), AdminClientConfig.configDef());

  private final Map<String, String> plain;
  private final Map<String, Secret> secrets;

  private KafkaClientSettings(Map<String, String> plain, Map<String, Secret> secrets) {
    this.plain = Map.copyOf(plain);
    this.secrets = Map.copyOf(secrets);
  }

  /** No settings: plaintext, no authentication. */
  public static KafkaClientSettings none() {
    return new KafkaClientSettings(Map.of(), Map.of());
  }

  /**
   * Reads {@code KAFKA_CLIENT_PROPERTIES_FILE} and every {@code KAFKA_CLIENT_*} variable; each bad
   * one is recorded as a problem on {@code env} naming it (never its value when it is a secret).
   */
  public static KafkaClientSettings fromEnv(EnvReader env) {
    Map<String, String> raw = new TreeMap<>();
    Map<String, String> origin = new TreeMap<>(); // property -> where it was set
    String file = env.string(ENV_FILE, null);
    if (file != null) {
      Properties props = new Properties();
      try (Reader r = Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8)) {
        props.load(r);
        props
            .stringPropertyNames()
            .forEach(
                k -> {
                  raw.put(k, props.getProperty(k).trim());
                  origin.put(k, k + " in " + ENV_FILE);
                });
      } catch (IOException | RuntimeException e) {
        env.problem(ENV_FILE + "='" + file + "' cannot be read: " + e.getMessage());
      }
    }
    for (String name : env.namesStartingWith(ENV_PREFIX)) {
      if (!name.equals(ENV_FILE)) {
        String property =
            name.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
        raw.put(property, env.string(name, ""));
        origin.put(property, name);
      }
    }
    Map<String, String> plain = new LinkedHashMap<>();
    Map<String, Secret> secrets = new LinkedHashMap<>();
    raw.forEach(
        (property, value) -> {
          String where = origin.get(property);
          ConfigDef.ConfigKey key = keyOf(property);
          if (key == null) {
            env.problem(where + ": " + property + " is not a Kafka client setting");
            return;
          }
          if (RESERVED.containsKey(property)) {
            env.problem(
                where
                    + ": "
                    + property
                    + " is set by runlane itself ("
                    + RESERVED.get(property)
                    + ")");
            return;
          }
          boolean secret = key.type == ConfigDef.Type.PASSWORD;
          try {
            Object parsed = ConfigDef.parseType(property, value, key.type);
            if (key.validator != null) {
              key.validator.ensureValid(property, parsed);
            }
          } catch (ConfigException e) {
            env.problem(where + ": " + (secret ? "invalid value for " + property : e.getMessage()));
            return;
          }
          if (secret) {
            secrets.put(property, Secret.of(value));
          } else {
            plain.put(property, value);
          }
        });
    for (String store :
        List.of(
            SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG)) {
      String path = plain.get(store);
      if (path != null && !Files.isReadable(Path.of(path))) {
        env.problem(origin.get(store) + ": " + store + "='" + path + "' is not a readable file");
      }
    }
    return new KafkaClientSettings(plain, secrets);
  }

  private static ConfigDef.ConfigKey keyOf(String property) {
    for (ConfigDef def : DEFS) {
      ConfigDef.ConfigKey key = def.configKeys().get(property);
      if (key != null) {
        return key;
      }
    }
    return null;
  }

  /** Every setting with its real value, for building clients; never log it. */
  public Map<String, Object> forClients() {
    Map<String, Object> m = new LinkedHashMap<>(plain);
    secrets.forEach((k, v) -> m.put(k, v.reveal()));
    return m;
  }

  /** {@code bootstrap.servers} plus every setting: what an admin client or consumer starts from. */
  public Map<String, Object> withBootstrap(String bootstrapServers) {
    Map<String, Object> m = forClients();
    m.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return m;
  }

  /** Whether any setting was given. */
  public boolean isEmpty() {
    return plain.isEmpty() && secrets.isEmpty();
  }

  /**
   * One line for a start-up failure whose cause is the cluster refusing these settings, naming the
   * variables to check; null when the failure is something else.
   */
  public static String explain(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SslAuthenticationException) {
        return "the TLS handshake with Kafka failed ("
            + t.getMessage()
            + "): check KAFKA_CLIENT_SECURITY_PROTOCOL and KAFKA_CLIENT_SSL_* (trust store, key"
            + " store, endpoint identification)";
      }
      if (t instanceof AuthenticationException) {
        return "Kafka refused the client's credentials ("
            + t.getMessage()
            + "): check KAFKA_CLIENT_SECURITY_PROTOCOL, KAFKA_CLIENT_SASL_MECHANISM and"
            + " KAFKA_CLIENT_SASL_JAAS_CONFIG";
      }
      if (t instanceof AuthorizationException) {
        return "Kafka denied an operation ("
            + t.getMessage()
            + "): the principal of KAFKA_CLIENT_SASL_JAAS_CONFIG (or the TLS certificate) lacks"
            + " an ACL";
      }
    }
    return null;
  }

  /** The settings with every secret as {@code ***}. */
  @Override
  public String toString() {
    Map<String, Object> shown = new TreeMap<>(plain);
    secrets.keySet().forEach(k -> shown.put(k, "***"));
    return shown.toString();
  }
}
