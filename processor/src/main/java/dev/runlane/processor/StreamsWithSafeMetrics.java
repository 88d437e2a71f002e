package dev.runlane.processor;

import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;

/**
 * Kafka Streams whose {@link #metrics()} leaves out the one gauge that is unsafe to read from
 * another thread. Streams 4.4's {@code uncommitted-bytes} gauge of a transactional RocksDB store
 * reads its write batch in native code without checking that the store is open, and a store's close
 * frees the batch before it removes the gauge. Micrometer's binder reads every metric's value on
 * its own thread, and so does each {@code /metrics} scrape: one such read during a task's close (a
 * rebalance, a shutdown) crashed the JVM with a SIGSEGV in {@code WriteBatch.getDataSize} (D109).
 * Every reader of the processor's metrics goes through this method; Streams' own use of the figure
 * (its commit trigger) is on the thread that closes the store, so it is not affected.
 */
final class StreamsWithSafeMetrics extends KafkaStreams {
  /** The gauge's name in {@code stream-state-metrics}. */
  static final String UNSAFE_GAUGE = "uncommitted-bytes";

  StreamsWithSafeMetrics(Topology topology, Properties props, KafkaClientSupplier clients) {
    super(topology, props, clients);
  }

  @Override
  public Map<MetricName, ? extends Metric> metrics() {
    return super.metrics().entrySet().stream()
        .filter(e -> !e.getKey().name().equals(UNSAFE_GAUGE))
        .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  /** Every metric, the unsafe gauge included: for a test that the filter is what hides it. */
  Map<MetricName, ? extends Metric> allMetrics() {
    return super.metrics();
  }
}
