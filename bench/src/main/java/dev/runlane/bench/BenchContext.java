package dev.runlane.bench;

import dev.runlane.bench.probe.Probes;
import dev.runlane.bench.report.Results;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.embedded.EmbeddedRedis;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/** What the stages share: the run mode, the broker, an owned Redis, the results. */
public final class BenchContext implements AutoCloseable {
  public static final int PARTITIONS = 12;

  public final boolean quick;
  public final Results results;
  public final String jar;

  /** The investigation-only probes this run takes ({@code BENCH_PROBES}). */
  public final Probes probes;

  private EmbeddedKafka kafka;
  private EmbeddedRedis redis;

  public BenchContext(boolean quick, Results results, String jar, Probes probes) {
    this.quick = quick;
    this.results = results;
    this.jar = jar;
    this.probes = probes;
  }

  /**
   * How many events (or runs) a stage that measures a rate writes: 200k with {@code --quick}, 1M in
   * a full run, as BENCHMARKS.md states it once.
   */
  public int volume() {
    return quick ? 200_000 : 1_000_000;
  }

  public synchronized EmbeddedKafka kafka() {
    if (kafka == null) {
      kafka = EmbeddedKafka.start(brokerConfig(System.getenv(BROKER_CONFIG_VARIABLE)));
    }
    return kafka;
  }

  /**
   * Kafka's own segment size (1 GiB) instead of the embedded broker's 16 MiB test segments: with
   * those, the log cleaner compacts the changelogs all through the measured minutes, and fetches
   * stalled for a few hundred ms while it did (D27). A production broker rolls a partition's log,
   * and so can clean it, once per GiB written to it. {@code
   * BENCH_BROKER_CONFIG=log.segment.bytes=16777216} brings the test segments back.
   */
  public static final Map<String, String> BROKER_DEFAULTS =
      Map.of("log.segment.bytes", Integer.toString(1 << 30));

  /** The bench's broker settings: {@link #BROKER_DEFAULTS}, then a run's overrides. */
  public static Map<String, String> brokerConfig(String spec) {
    Map<String, String> config = new LinkedHashMap<>(BROKER_DEFAULTS);
    config.putAll(brokerOverrides(spec));
    return config;
  }

  /** Overrides of the embedded broker's settings, parsed by {@link #brokerOverrides}. */
  public static final String BROKER_CONFIG_VARIABLE = "BENCH_BROKER_CONFIG";

  /**
   * Broker settings a run may override, as {@code name=value,name=value} (e.g. {@code
   * log.segment.bytes=1073741824}), to see what the shared broker's housekeeping costs.
   */
  public static Map<String, String> brokerOverrides(String spec) {
    Map<String, String> out = new LinkedHashMap<>();
    if (spec == null || spec.isBlank()) {
      return out;
    }
    for (String pair : spec.split(",")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            BROKER_CONFIG_VARIABLE + ": '" + pair + "' is not name=value");
      }
      out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
    }
    return out;
  }

  /**
   * A positive number from the environment, or {@code def} when the variable is unset.
   *
   * @throws IllegalArgumentException naming the variable, when it is set to anything else
   */
  public static double envNumber(String name, double def) {
    double d = envNumber(name, def, 0);
    if (d <= 0) {
      throw new IllegalArgumentException(name + "='" + System.getenv(name) + "' must be above 0");
    }
    return d;
  }

  /**
   * A number of at least {@code min} from the environment, or {@code def} when unset.
   *
   * @throws IllegalArgumentException naming the variable, when it is set to anything else
   */
  public static double envNumber(String name, double def, double min) {
    String v = System.getenv(name);
    if (v == null || v.isBlank()) {
      return def;
    }
    try {
      double d = Double.parseDouble(v.trim());
      if (d >= min) {
        return d;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(name + "='" + v + "' must be a number of at least " + min);
  }

  public String bootstrap() {
    return kafka().bootstrapServers();
  }

  /** A Redis server this run owns (so it may flush it and read INFO memory). */
  public synchronized EmbeddedRedis redis() {
    if (redis == null) {
      redis = EmbeddedRedis.startOwned();
    }
    return redis;
  }

  /**
   * Copies the named tuning variables from this process's environment into a service's, so that a
   * run can try other settings without a rebuild (e.g. {@code INGRESS_PRODUCER_LINGER_MS=5}).
   */
  public static void passThrough(Map<String, String> env, Collection<String> names) {
    for (String name : names) {
      String value = System.getenv(name);
      if (value != null) {
        env.put(name, value);
      }
    }
  }

  /** The broker's topics now (none if no stage has started the broker yet). */
  public synchronized Set<String> topics() throws Exception {
    if (kafka == null) {
      return Set.of();
    }
    try (Admin admin = admin()) {
      return admin.listTopics().names().get();
    }
  }

  /**
   * Deletes the topics created since {@code before}. A stage's compacted topics (the processor
   * stage writes ~1M keys to several) otherwise keep the log cleaner busy under the next stage.
   */
  public synchronized void deleteTopicsSince(Set<String> before) throws Exception {
    if (kafka == null) {
      return;
    }
    try (Admin admin = admin()) {
      Set<String> created = new TreeSet<>(admin.listTopics().names().get());
      created.removeAll(before);
      if (!created.isEmpty()) {
        admin.deleteTopics(created).all().get(60, TimeUnit.SECONDS);
      }
    }
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
  }

  /** Creates the topics; they are served when this returns (TopicEnsurer, D10). */
  public void createTopics(String... names) {
    try (Admin admin = admin()) {
      TopicEnsurer.ensure(
          admin,
          Arrays.stream(names)
              .map(n -> TopicEnsurer.plain(n, new TopicSettings(PARTITIONS, (short) 1)))
              .toList(),
          Duration.ofSeconds(30));
    }
  }

  /** The command that reproduces one stage. */
  public String command(String stage) {
    return "java -jar bench/target/runlane-bench.jar" + (quick ? " --quick " : " ") + stage;
  }

  @Override
  public synchronized void close() {
    if (redis != null) {
      redis.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }
}
