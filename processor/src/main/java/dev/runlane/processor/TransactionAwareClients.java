package dev.runlane.processor;

import dev.runlane.processor.topology.RedisBudget;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;

/**
 * Kafka's own clients for Streams, with each stream thread's producer telling the {@link
 * RedisBudget} when the thread's transaction ends: that is the one place that knows (under
 * exactly_once_v2 a thread's tasks share one producer, and it commits or aborts on the thread). It
 * also counts aborted transactions, which a processor that keeps up never has (D42).
 */
final class TransactionAwareClients implements KafkaClientSupplier {
  static final String ABORTED = "runlane.processor.transactions.aborted";

  private final RedisBudget budget;
  private final Counter aborted;

  TransactionAwareClients(RedisBudget budget, MeterRegistry registry) {
    this.budget = budget;
    this.aborted =
        Counter.builder(ABORTED)
            .description(
                "Stream-thread transactions aborted (a crash of a task, a fenced producer, a"
                    + " timeout): their work is done again from the last commit")
            .register(registry);
  }

  @Override
  public Admin getAdmin(Map<String, Object> config) {
    return Admin.create(config);
  }

  @Override
  public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
    return new EndingProducer(
        new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()));
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    return consumer(config);
  }

  @Override
  public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
    return consumer(config);
  }

  @Override
  public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
    return consumer(config);
  }

  private static Consumer<byte[], byte[]> consumer(Map<String, Object> config) {
    return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  /** A producer that passes everything on, and reports the end of each transaction. */
  private final class EndingProducer implements Producer<byte[], byte[]> {
    private final Producer<byte[], byte[]> producer;

    EndingProducer(Producer<byte[], byte[]> producer) {
      this.producer = producer;
    }

    @Override
    public void commitTransaction() {
      try {
        producer.commitTransaction();
      } finally {
        budget.transactionEnded();
      }
    }

    @Override
    public void abortTransaction() {
      try {
        producer.abortTransaction();
      } finally {
        aborted.increment();
        budget.transactionEnded();
      }
    }

    @Override
    public void initTransactions() {
      producer.initTransactions();
    }

    @Override
    public void beginTransaction() {
      producer.beginTransaction();
    }

    @Override
    public void sendOffsetsToTransaction(
        Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
      producer.sendOffsetsToTransaction(offsets, groupMetadata);
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
      producer.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
      producer.unregisterMetricFromSubscription(metric);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
      return producer.send(record);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
      return producer.send(record, callback);
    }

    @Override
    public void flush() {
      producer.flush();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
      return producer.partitionsFor(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
      return producer.metrics();
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
      return producer.clientInstanceId(timeout);
    }

    @Override
    public void close() {
      producer.close();
    }

    @Override
    public void close(Duration timeout) {
      producer.close(timeout);
    }
  }
}
