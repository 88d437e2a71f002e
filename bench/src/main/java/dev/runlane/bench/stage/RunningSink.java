package dev.runlane.bench.stage;

import dev.runlane.bench.probe.Offsets;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedPostgres;
import dev.runlane.sink.SinkApp;
import dev.runlane.sink.SinkConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

/**
 * A sink on {@code topic}, writing a database of its own on {@code postgres}: the sink stage's
 * measured run, and the e2e stage's last window.
 */
record RunningSink(SinkApp app, PrometheusMeterRegistry registry) implements AutoCloseable {
  static RunningSink start(
      EmbeddedPostgres postgres, String bootstrap, String topic, String group) {
    String db = postgres.createDatabase(group.replace('-', '_'));
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("TOPIC_EVENTS", topic);
    env.put("SINK_GROUP_ID", group);
    env.put(SinkConfig.ENV_DATABASE_URL, postgres.jdbcUrl(db));
    env.put(SinkConfig.ENV_DATABASE_USER, postgres.username());
    if (postgres.password() != null) {
      env.put(SinkConfig.ENV_DATABASE_PASSWORD, postgres.password());
    }
    PrometheusMeterRegistry registry = Metrics.newRegistry("sink");
    try {
      SinkApp app = SinkApp.start(SinkConfig.fromEnv(env).withPort(0), registry);
      // Joined, every partition positioned: its start (migrations, the join) is not its rate.
      app.awaitReady(Duration.ofMinutes(2));
      return new RunningSink(app, registry);
    } catch (RuntimeException e) {
      registry.close();
      throw e;
    }
  }

  /**
   * Until the sink has stored all that {@code topic} holds now: its group's Kafka offsets, which it
   * commits after each database commit (D54), reach the topic's end offsets.
   */
  void awaitCaughtUp(String bootstrap, String topic, String group, Duration timeout)
      throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      Map<TopicPartition, Long> end = Offsets.endOffsets(admin, topic);
      long total = end.values().stream().mapToLong(Long::longValue).sum();
      long deadline = System.nanoTime() + timeout.toNanos();
      while (Offsets.committed(admin, group, end) < total) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the sink did not catch up within " + timeout);
        }
        LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      }
    }
  }

  /** The registry last: it holds a JVM GC listener until closed (Metrics.newRegistry). */
  @Override
  public void close() {
    try {
      app.close();
    } finally {
      registry.close();
    }
  }
}
