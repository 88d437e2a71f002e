package dev.runlane.processor;

import dev.runlane.common.kafka.SocketBuffers;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.processor.runs.RunStoreMemory;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.DefaultProductionExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The processor's Kafka Streams settings, from its configuration: the exception handlers set
 * explicitly, and every client setting a decision record explains. Public for the bench's bare
 * pipeline, whose copying Streams application must have the same client settings as the processor
 * to be its baseline (D92).
 */
public final class StreamsSettings {
  private StreamsSettings() {}

  /** The settings of generation 0, whose application id is the configured one. */
  static Properties of(ProcessorConfig config, HostInfo self) {
    return of(config, self, config.applicationId());
  }

  /**
   * The settings of the Streams client that runs {@code applicationId} (a generation's id), serving
   * interactive queries at {@code self}.
   */
  public static Properties of(ProcessorConfig config, HostInfo self, String applicationId) {
    Properties p = new Properties();
    application(p, config, self, applicationId);
    exceptionHandlers(p);
    membership(p, config);
    recordSizes(p, config);
    producer(p, config);
    stores(p, config, applicationId);
    fetches(p);
    // Every client Streams makes: a fixed 64 KiB receive buffer dropped fetch responses (D34).
    p.putAll(SocketBuffers.OS_DEFAULTS);
    // The operator's client settings (security, ...), for every client Streams makes; the ones
    // runlane needs were refused when the configuration was loaded.
    p.putAll(config.kafkaClient().forClients());
    return p;
  }

  /** Which application, where its brokers and state are, and how it processes and commits. */
  private static void application(
      Properties p, ProcessorConfig config, HostInfo self, String applicationId) {
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
    // The record of decided ids keeps its horizon; its changelog keeps an hour more, not the
    // default day, which a new instance would restore for nothing (D68).
    p.put(
        StreamsConfig.WINDOW_STORE_CHANGE_LOG_ADDITIONAL_RETENTION_MS_CONFIG,
        Duration.ofHours(1).toMillis());
  }

  /** The exception handlers, set explicitly. */
  private static void exceptionHandlers(Properties p) {
    p.put(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndFailExceptionHandler.class);
    p.put(
        StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndFailProcessingExceptionHandler.class);
    p.put(
        StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG,
        DefaultProductionExceptionHandler.class);
  }

  /** How long a crashed member keeps its partitions, and static membership (D9, D29). */
  private static void membership(Properties p, ProcessorConfig config) {
    // A crashed member is only dropped after the session timeout: 45 s by default in Kafka 4.x,
    // during which its partitions stall. 6 s, the broker's minimum, keeps recovery short (D9).
    long session = config.sessionTimeout().toMillis();
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), (int) session);
    p.put(
        StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
        (int) Math.max(500, session / 4));
    config
        .groupInstanceId()
        .ifPresent(
            id ->
                p.put(
                    StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), id));
  }

  /** The largest record the producer and the internal topics take, and their durability. */
  private static void recordSizes(Properties p, ProcessorConfig config) {
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
  }

  /** The producer's compression and linger. */
  private static void producer(Properties p, ProcessorConfig config) {
    p.put(
        StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG),
        config.producerCompression().kafkaName());
    // Under exactly-once every commit flushes the producer, so the linger only groups records
    // between commits; a longer one measured no gain in the processor benchmark.
    p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
  }

  /** Transactional stores, committed reads, and the run stores' shared memory (D19, D44). */
  private static void stores(Properties p, ProcessorConfig config, String applicationId) {
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
  }

  /** How long the main consumer's fetch waits for records (D21). */
  private static void fetches(Properties p) {
    // At a live rate every produce to the input would complete a waiting fetch: ~1,000 polls a
    // second of a record or two, each paying the stream thread's loop and the broker's fetch. Wait
    // for 32 KiB or 10 ms instead; a backlog fills the fetch at once (D21).
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), 32 * 1024);
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), 10);
    // A restore (a new instance, a grow's seeded run store) writes each poll as one RocksDB batch:
    // 10x Kafka's 1,000 records per poll, 4 MiB per partition fetch, fewer and larger batches
    // while the new generation's events wait (issue 36: the grow pause).
    p.put(StreamsConfig.restoreConsumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 10_000);
    p.put(
        StreamsConfig.restoreConsumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG),
        4 * 1024 * 1024);
  }
}
