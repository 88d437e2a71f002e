package dev.runlane.processor;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.config.Secret;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.kafka.Compression;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.RedisDedup.RedisDedupSettings;
import dev.runlane.processor.dedup.RedisEndpoint;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the processor's variables from the environment, group by group, in the order of {@link
 * ProcessorConfig}'s components; {@link ProcessorConfig#fromEnv} checks how they combine.
 */
final class ProcessorEnv {
  private static final String DEFAULT_REDIS_URL = "redis://localhost:6379";

  private ProcessorEnv() {}

  /** Every setting, or its default where a value is bad (the problem is recorded in {@code r}). */
  static ProcessorConfig read(EnvReader r) {
    // Read in this order, so that the problems are reported in the variables' order.
    Placement placement = Placement.read(r);
    Deduplication dedup = Deduplication.read(r);
    Processing processing = Processing.read(r);
    Access access = Access.read(r, placement.redisUri());
    DecisionLogSettings decisionLog = DecisionLogSettings.fromEnv(r, placement.topics());
    return of(placement, dedup, processing, access, decisionLog);
  }

  /** Where the processor connects and listens, where it keeps its state, and its topics. */
  private record Placement(
      String bootstrapServers,
      URI redisUri,
      int port,
      String advertisedHost,
      String applicationId,
      Path stateDir,
      TopicNames topics,
      TopicSettings topicSettings) {

    static Placement read(EnvReader r) {
      return new Placement(
          r.string("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"),
          redisUrl(r),
          r.port("PROCESSOR_PORT", 9081),
          r.string("PROCESSOR_ADVERTISED_HOST", "localhost"),
          r.string("PROCESSOR_APPLICATION_ID", "runlane-processor"),
          Path.of(r.string("PROCESSOR_STATE_DIR", "./data/processor")),
          TopicNames.fromEnv(r),
          TopicSettings.fromEnv(r));
    }
  }

  /**
   * {@code REDIS_URL}: one node, or a cluster's seeds or Sentinel's with their own schemes, whose
   * several hosts java.net.URI does not read (D82).
   */
  private static URI redisUrl(EnvReader r) {
    String value = r.string("REDIS_URL", null);
    int schemeEnd = value == null ? -1 : value.indexOf("://");
    if (schemeEnd < 0 || !RedisEndpoint.multiNode(value.substring(0, schemeEnd))) {
      return r.uri("REDIS_URL", DEFAULT_REDIS_URL, Set.of("redis", "rediss"));
    }
    try {
      URI uri = new URI(value);
      RedisEndpoint.parse(uri);
      return uri;
    } catch (URISyntaxException | IllegalArgumentException e) {
      String why = e instanceof URISyntaxException ? "is not a valid URI" : e.getMessage();
      r.problem("REDIS_URL='" + redacted(value) + "' " + why);
      return URI.create(DEFAULT_REDIS_URL);
    }
  }

  /** {@code url} with the user info of its authority replaced by ***. */
  private static String redacted(String url) {
    int start = url.indexOf("://") + 3;
    int end = start;
    while (end < url.length() && "/?#".indexOf(url.charAt(end)) < 0) {
      end++;
    }
    int at = url.lastIndexOf('@', end - 1);
    return at < start ? url : url.substring(0, start) + "***@" + url.substring(at + 1);
  }

  /** Redis dedup: its keys, and how long a call, an answer and block mode may take (D42). */
  private record Deduplication(
      boolean enabled,
      String keyPrefix,
      Duration claimTtl,
      Duration doneTtl,
      Duration redisTimeout,
      Duration redisSlow,
      RedisFailureMode redisFailureMode,
      Duration redisBlockTimeout) {

    static Deduplication read(EnvReader r) {
      return new Deduplication(
          r.bool("DEDUP_REDIS_ENABLED", true),
          r.string("DEDUP_KEY_PREFIX", RedisDedupSettings.DEFAULT_KEY_PREFIX),
          r.seconds("DEDUP_CLAIM_TTL_SECONDS", 60, 1, 3600),
          r.seconds("DEDUP_DONE_TTL_SECONDS", 86_400, 60, 30L * 86_400),
          // Every call is made inside an open Streams transaction, which the broker aborts after
          // 10 s: one call started as the transaction's Redis budget (3 s) runs out must still
          // end well before (D42).
          r.millis("REDIS_TIMEOUT_MS", 1000, 10, 3000),
          // An answer slower than this is treated like none: the processor decides on the run
          // store for a second before asking again (D42).
          r.millis("REDIS_SLOW_MS", 250, 1, 3000),
          r.enumValue("REDIS_FAILURE_MODE", RedisFailureMode.class, RedisFailureMode.DEGRADE),
          // How long block mode holds a task's events for Redis before failing its thread. A
          // transaction waits at most its Redis budget; the rest of the wait is spread over
          // later transactions, which leave the events parked (D42).
          r.seconds("REDIS_BLOCK_TIMEOUT_SECONDS", 5, 1, 300));
    }
  }

  /**
   * How the stream threads work: batches, commits, the reorder window, the guarantee, limits,
   * memory and group membership.
   */
  private record Processing(
      int streamThreads,
      int batchSize,
      Duration batchInterval,
      Duration commitInterval,
      Duration reorderWindow,
      int reorderMaxHeld,
      Duration sessionTimeout,
      String processingGuarantee,
      boolean transactionalStateStores,
      Compression producerCompression,
      int maxBodyBytes,
      int rocksDbMemoryMb,
      Optional<String> groupInstanceId,
      boolean shutdownLeavesGroup) {

    static Processing read(EnvReader r) {
      return new Processing(
          r.integer("PROCESSOR_THREADS", 1, 1, 256),
          r.integer("PROCESSOR_BATCH_SIZE", 256, 1, 10_000),
          r.millis("PROCESSOR_BATCH_INTERVAL_MS", 20, 1, 10_000),
          // Output is visible to read_committed readers only at commits: the interval is the
          // floor of end-to-end latency. 50 ms instead of 100 costs no throughput (D18). At most
          // the transaction timeout (Streams' 10 s under exactly-once): Streams refuses a longer
          // interval at start with its own names for both, which no operator has set.
          r.millis("PROCESSOR_COMMIT_INTERVAL_MS", 50, 10, 10_000),
          // Off by default: a window delays every applied event by its length, and only
          // consumers that need every transition in order want that. At most 5 s, so that a
          // stopping generation releases what it holds within the tools' 10 s quiet period
          // (D46).
          r.duration(
              "PROCESSOR_REORDER_WINDOW", Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5)),
          r.integer(
              "PROCESSOR_REORDER_MAX_HELD", ProcessorConfig.DEFAULT_REORDER_MAX_HELD, 1, 1_000_000),
          r.millis("PROCESSOR_SESSION_TIMEOUT_MS", 6000, 1000, 300_000),
          r.string("PROCESSING_GUARANTEE", "exactly_once_v2"),
          // Under exactly-once, a task that crashed is wiped and restored from its changelog
          // unless its stores are transactional (KIP-892, new in Kafka 4.4): 11.9-12.8 s vs
          // 7.4-8.7 s to recover a processor with 1M runs after kill -9 (D19). Off is the
          // escape hatch.
          r.bool("PROCESSOR_TRANSACTIONAL_STATE_STORES", true),
          r.enumValue("PROCESSOR_PRODUCER_COMPRESSION", Compression.class, Compression.LZ4),
          // Must be at least the ingress's INGRESS_MAX_BODY_BYTES: larger records are
          // dead-lettered by reference, never retried for ever.
          r.integer("PROCESSOR_MAX_BODY_BYTES", 1024 * 1024, 1024, 16 * 1024 * 1024),
          // One budget for the block cache and memtables of all run stores (RunStoreMemory);
          // 0 keeps Streams' per-store defaults, which grow with the partition count.
          r.integer("PROCESSOR_ROCKSDB_MEMORY_MB", 256, 0, 1024 * 1024),
          // Static group membership: a restarted instance with the same id takes its tasks
          // back at once instead of after the session timeout (D29). Unset: dynamic members.
          Optional.ofNullable(r.string("PROCESSOR_GROUP_INSTANCE_ID", null)),
          // On SIGTERM, hand the partitions to the other instances at once instead of keeping
          // them for a successor with the same instance id: a successor that needs longer than
          // the session timeout to start gets them back only after two more rebalances (D102).
          r.bool("PROCESSOR_SHUTDOWN_LEAVES_GROUP", false));
    }
  }

  /** The control topic, the Kafka clients' settings, Redis's credentials and the topic policy. */
  private record Access(
      String controlTopic,
      KafkaClientSettings kafkaClient,
      Optional<String> redisUsername,
      Optional<Secret> redisPassword,
      Optional<String> redisSentinelUsername,
      Optional<Secret> redisSentinelPassword,
      TopicPolicy topicPolicy,
      Optional<Secret> runsToken) {

    static Access read(EnvReader r, URI redisUri) {
      // Sentinel's own credentials, apart from the primary's: set for another kind of Redis they
      // would be ignored, so they stop the start instead (D77).
      Optional<String> sentinelUser =
          Optional.ofNullable(r.string("REDIS_SENTINEL_USERNAME", null));
      Optional<Secret> sentinelPassword =
          r.isSet("REDIS_SENTINEL_PASSWORD")
              ? Optional.of(Secret.of(r.string("REDIS_SENTINEL_PASSWORD", "")))
              : Optional.empty();
      boolean sentinel = redisUri.getScheme().toLowerCase(Locale.ROOT).endsWith("+sentinel");
      for (String name : List.of("REDIS_SENTINEL_USERNAME", "REDIS_SENTINEL_PASSWORD")) {
        if (r.isSet(name) && !sentinel) {
          r.problem(name + " is set but REDIS_URL is not redis+sentinel:// or rediss+sentinel://");
        }
      }
      return new Access(
          // Which generation runs is read from here (D35); written by the operator tools only.
          ControlTopic.nameFromEnv(r),
          // Security and any other setting for every Kafka client Streams and we make.
          KafkaClientSettings.fromEnv(r),
          // Apart from REDIS_URL, so that a Kubernetes Secret can hold the password alone; they
          // win over a user or password in the URL.
          Optional.ofNullable(r.string("REDIS_USERNAME", null)),
          // One value, commas and all (not a list like the signing secrets).
          r.isSet("REDIS_PASSWORD")
              ? Optional.of(Secret.of(r.string("REDIS_PASSWORD", "")))
              : Optional.empty(),
          sentinelUser,
          sentinelPassword,
          TopicPolicy.fromEnv(r),
          // GET /runs/{id} and its relay only with this bearer token when set (D80).
          r.isSet("PROCESSOR_RUNS_TOKEN")
              ? Optional.of(Secret.of(r.string("PROCESSOR_RUNS_TOKEN", "")))
              : Optional.empty());
    }
  }

  private static ProcessorConfig of(
      Placement placement,
      Deduplication dedup,
      Processing processing,
      Access access,
      DecisionLogSettings decisionLog) {
    return new ProcessorConfig(
        placement.bootstrapServers(),
        placement.redisUri(),
        placement.port(),
        placement.advertisedHost(),
        placement.applicationId(),
        placement.stateDir(),
        placement.topics(),
        placement.topicSettings(),
        dedup.enabled(),
        dedup.keyPrefix(),
        dedup.claimTtl(),
        dedup.doneTtl(),
        dedup.redisTimeout(),
        dedup.redisSlow(),
        dedup.redisFailureMode(),
        dedup.redisBlockTimeout(),
        processing.streamThreads(),
        processing.batchSize(),
        processing.batchInterval(),
        processing.commitInterval(),
        processing.reorderWindow(),
        processing.reorderMaxHeld(),
        processing.sessionTimeout(),
        processing.processingGuarantee(),
        processing.transactionalStateStores(),
        processing.producerCompression(),
        processing.maxBodyBytes(),
        processing.rocksDbMemoryMb(),
        processing.groupInstanceId(),
        processing.shutdownLeavesGroup(),
        access.controlTopic(),
        access.kafkaClient(),
        access.redisUsername(),
        access.redisPassword(),
        access.redisSentinelUsername(),
        access.redisSentinelPassword(),
        access.topicPolicy(),
        true,
        access.runsToken(),
        decisionLog);
  }
}
