package dev.runlane.sink;

import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.SocketBuffers;
import dev.runlane.sink.consume.SinkLoop;
import dev.runlane.sink.db.SinkDatabase;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running sink: the database (pool and migrations), the consumer loop on a thread of its own,
 * and the admin server. {@link #close()} stops them in reverse order.
 */
public final class SinkApp implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SinkApp.class);

  private final SinkDatabase database;
  private final KafkaClientMetrics consumerMetrics;
  private final SinkLoop loop;
  private final Thread thread;
  private final AdminServer admin;

  private SinkApp(
      SinkDatabase database,
      KafkaClientMetrics consumerMetrics,
      SinkLoop loop,
      Thread thread,
      AdminServer admin) {
    this.database = database;
    this.consumerMetrics = consumerMetrics;
    this.loop = loop;
    this.thread = thread;
    this.admin = admin;
  }

  /**
   * {@link #start(SinkConfig, PrometheusMeterRegistry, Runnable)} for an embedded sink: a loop that
   * dies only fails liveness.
   */
  public static SinkApp start(SinkConfig config, PrometheusMeterRegistry registry) {
    return start(config, registry, () -> {});
  }

  /**
   * Opens the database (waiting for it up to its start-up timeout), then starts consuming.
   *
   * @param onLoopDeath run when the consumer loop stops on a failure it cannot recover from
   */
  public static SinkApp start(
      SinkConfig config, PrometheusMeterRegistry registry, Runnable onLoopDeath) {
    SinkDatabase database =
        SinkDatabase.open(
            config.databaseUrl(),
            config.databaseUser(),
            config.databasePassword(),
            config.databaseStartupTimeout());
    KafkaConsumer<String, byte[]> consumer = null;
    try {
      consumer = new KafkaConsumer<>(consumerProperties(config));
      KafkaClientMetrics consumerMetrics = new KafkaClientMetrics(consumer);
      consumerMetrics.bindTo(registry);
      SinkMetrics metrics = new SinkMetrics(registry);
      SinkLoop loop =
          new SinkLoop(consumer, config.topic(), config.groupId(), database, metrics, onLoopDeath);
      AdminServer admin =
          AdminServer.start(null, config.port(), registry, loop::live, loop::ready, Map.of());
      Thread thread = new Thread(loop, "sink-consumer");
      thread.start();
      log.info(
          "sink started: topic={} group={} database={} admin port={}",
          config.topic(),
          config.groupId(),
          config.databaseUrl(),
          admin.port());
      return new SinkApp(database, consumerMetrics, loop, thread, admin);
    } catch (RuntimeException e) {
      if (consumer != null) {
        consumer.close();
      }
      database.close();
      throw e;
    }
  }

  static Map<String, Object> consumerProperties(SinkConfig config) {
    Map<String, Object> p = new HashMap<>(SocketBuffers.OS_DEFAULTS);
    p.putAll(config.kafkaClient().withBootstrap(config.bootstrapServers()));
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
    // Only committed output of the processor's transactions: an aborted attempt's events were
    // never applied.
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    // Positions come from the database, never from offsets committed to Kafka (D54).
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // Every position is sought from the database; a position retention deleted under the sink
    // must fail the poll, never be moved past in silence (D63).
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, config.maxPollRecords());
    p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "runlane-sink");
    // A crashed sink's partitions wait for its session to expire: 6 s, not Kafka's 45 s, as the
    // processor's (D9). KAFKA_CLIENT_SESSION_TIMEOUT_MS overrides it.
    p.putIfAbsent(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000);
    p.putIfAbsent(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_500);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    return p;
  }

  public int adminPort() {
    return admin.port();
  }

  public boolean ready() {
    return loop.ready();
  }

  public boolean databaseUp() {
    return loop.databaseUp();
  }

  /** Waits until ready, or throws. */
  public void awaitReady(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!loop.ready()) {
      if (!loop.live() || !thread.isAlive()) {
        throw new IllegalStateException("the sink's consumer loop stopped");
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the sink was not ready within " + timeout);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  /** Stops consuming (the batch in flight commits or rolls back first), then the rest. */
  @Override
  public void close() {
    loop.stop();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    admin.close();
    consumerMetrics.close();
    database.close();
    log.info("sink stopped");
  }
}
