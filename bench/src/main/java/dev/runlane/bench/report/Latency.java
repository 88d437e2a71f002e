package dev.runlane.bench.report;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.ConcurrentHistogram;

/** Latencies in microseconds, recorded from any thread; up to one minute, 3 significant digits. */
public final class Latency {
  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(1);

  private final ConcurrentHistogram histogram = new ConcurrentHistogram(HIGHEST_MICROS, 3);

  /** Records a latency given in nanoseconds; negative values count as 0, huge ones are capped. */
  public void recordNanos(long nanos) {
    long micros = Math.max(0, nanos / 1_000);
    histogram.recordValue(Math.min(micros, HIGHEST_MICROS));
  }

  /**
   * The percentiles of a copy: an answer that arrives after the load's drain timeout is recorded
   * while a summary is read, and the histogram's iterator then throws (D92).
   */
  public Summary summary() {
    return Summary.of(histogram.copy());
  }

  /** Percentiles in milliseconds. */
  public record Summary(long count, double p50, double p99, double p999, double max, double mean) {
    public static Summary of(AbstractHistogram h) {
      return new Summary(
          h.getTotalCount(),
          ms(h.getValueAtPercentile(50)),
          ms(h.getValueAtPercentile(99)),
          ms(h.getValueAtPercentile(99.9)),
          ms(h.getMaxValue()),
          h.getTotalCount() == 0 ? 0 : h.getMean() / 1000.0);
    }

    private static double ms(long micros) {
      return micros / 1000.0;
    }

    @Override
    public String toString() {
      return String.format(
          "p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.1f ms (n=%d)",
          p50, p99, p999, max, count);
    }
  }
}
