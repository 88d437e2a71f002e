package dev.runlane.sink;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The sink's meters; every name in one place. */
public final class SinkMetrics {
  /**
   * Events read, by {@code outcome}: written, duplicate (absorbed by the constraint), rejected (set
   * aside in {@code sink_rejected}: refused by PostgreSQL, or no event; D61).
   */
  public static final String EVENTS = "runlane.sink.events";

  /** Run upserts by {@code outcome}: applied, refused (an older state than the stored one). */
  public static final String RUNS = "runlane.sink.runs";

  public static final String BATCH_LATENCY = "runlane.sink.batch.latency";
  public static final String BATCH_SIZE = "runlane.sink.batch.size";
  public static final String END_TO_END = "runlane.sink.end.to.end.latency";

  /** Records of the topic past the offsets stored in the database (D63). */
  public static final String LAG = "runlane.sink.lag";

  /** Records retention deleted below a stored offset, not yet accepted (D63). */
  public static final String RETENTION_GAP = "runlane.sink.retention.gap";

  /** Partitions whose stored offset is past the log end: the topic made again (D63). */
  public static final String OFFSETS_AHEAD = "runlane.sink.offsets.ahead";

  /** Batches written again after a serialization failure or a deadlock. */
  public static final String BATCH_RETRIES = "runlane.sink.batch.retries";

  public static final String DATABASE_AVAILABLE = "runlane.sink.database.available";
  public static final String DATABASE_FAILURES = "runlane.sink.database.failures";
  public static final String OFFSETS_MOVED = "runlane.sink.offsets.moved";
  public static final String DATA_UNSTORABLE = "runlane.sink.data.unstorable";

  private final Counter written;
  private final Counter duplicates;
  private final Counter rejected;
  private final Counter batchRetries;
  private final Counter applied;
  private final Counter refused;
  private final Timer batchLatency;
  private final DistributionSummary batchSize;
  private final Timer endToEnd;
  private final Counter databaseFailures;
  private final Counter offsetsMoved;
  private final Counter dataUnstorable;
  private final AtomicLong lag = new AtomicLong();
  private final AtomicLong retentionGap = new AtomicLong();
  private final AtomicLong offsetsAhead = new AtomicLong();
  private final AtomicLong databaseAvailable = new AtomicLong(1);

  public SinkMetrics(MeterRegistry registry) {
    written = events(registry, "written");
    duplicates = events(registry, "duplicate");
    rejected = events(registry, "rejected");
    batchRetries = Counter.builder(BATCH_RETRIES).register(registry);
    applied = Counter.builder(RUNS).tag("outcome", "applied").register(registry);
    refused = Counter.builder(RUNS).tag("outcome", "refused").register(registry);
    batchLatency =
        Timer.builder(BATCH_LATENCY)
            .description("from a poll's return to its transaction's commit")
            .publishPercentileHistogram()
            .register(registry);
    batchSize = DistributionSummary.builder(BATCH_SIZE).baseUnit("records").register(registry);
    endToEnd =
        Timer.builder(END_TO_END)
            .description("from the ingress's receipt of the webhook to the row's commit")
            .publishPercentileHistogram()
            .register(registry);
    databaseFailures = Counter.builder(DATABASE_FAILURES).register(registry);
    offsetsMoved =
        Counter.builder(OFFSETS_MOVED)
            .description("batches rolled back: another writer had moved the stored offsets")
            .register(registry);
    dataUnstorable =
        Counter.builder(DATA_UNSTORABLE)
            .description("events whose data PostgreSQL's jsonb cannot hold, stored as null")
            .register(registry);
    Gauge.builder(LAG, lag, AtomicLong::get).baseUnit("records").register(registry);
    Gauge.builder(RETENTION_GAP, retentionGap, AtomicLong::get)
        .baseUnit("records")
        .description("records deleted by retention before the sink stored them, not accepted")
        .register(registry);
    Gauge.builder(OFFSETS_AHEAD, offsetsAhead, AtomicLong::get)
        .baseUnit("partitions")
        .description("partitions whose stored offset is past the log end (the topic made again)")
        .register(registry);
    Gauge.builder(DATABASE_AVAILABLE, databaseAvailable, AtomicLong::get).register(registry);
  }

  private static Counter events(MeterRegistry registry, String outcome) {
    return Counter.builder(EVENTS).tag("outcome", outcome).register(registry);
  }

  public void batch(int records, long nanos) {
    batchSize.record(records);
    batchLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  public void written(long n) {
    written.increment(n);
  }

  public void duplicates(long n) {
    duplicates.increment(n);
  }

  public void rejected() {
    rejected.increment();
  }

  public void batchRetried() {
    batchRetries.increment();
  }

  public void retentionGap(long records) {
    retentionGap.set(records);
  }

  public void offsetsAhead(long partitions) {
    offsetsAhead.set(partitions);
  }

  public void runs(long appliedCount, long refusedCount) {
    applied.increment(appliedCount);
    refused.increment(refusedCount);
  }

  public void endToEnd(Duration latency) {
    if (!latency.isNegative()) {
      endToEnd.record(latency);
    }
  }

  public void lag(long records) {
    lag.set(records);
  }

  public void databaseAvailable(boolean available) {
    databaseAvailable.set(available ? 1 : 0);
  }

  public void databaseFailure() {
    databaseFailures.increment();
  }

  public void offsetsMoved() {
    offsetsMoved.increment();
  }

  public void dataUnstorable() {
    dataUnstorable.increment();
  }
}
