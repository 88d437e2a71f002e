package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.load.PipelineWindow;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.BrokerRequests;
import dev.runlane.bench.probe.Probes;
import dev.runlane.bench.probe.ProcessorMeters;
import dev.runlane.bench.probe.TcpCounters;
import dev.runlane.bench.probe.ThreadCpu;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.processor.topology.ProcessorMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Opt-in stage: the e2e pipeline at one rate for minutes, in 5 s windows, each window's end-to-end
 * tail printed next to the CPU each group of threads used in it. It answers "where does this spike
 * come from" (a spike that lines up with one group's CPU names it, as the broker's log cleaner did,
 * D18), which one p99 over a long window cannot. {@code BENCH_SOAK_RATE} (default 1500/s) and
 * {@code BENCH_SOAK_SECONDS} (default 300, quick 120, after the JIT warm-up) set the load; with
 * {@code BENCH_PROBES} ({@link Probes}) each line adds the broker's requests and the machine's TCP
 * drops and retransmits.
 *
 * <p>Each window is one {@link PipelineWindow#measure} call, which waits for the window's last
 * events before the next starts: the load pauses for that wait (well under a second unless the
 * window was bad), so the offered rate averages a little below the nominal one.
 */
public final class SoakStage extends Stage {
  static final String STAGE = "soak";
  static final String RATE_VARIABLE = "BENCH_SOAK_RATE";
  static final String SECONDS_VARIABLE = "BENCH_SOAK_SECONDS";
  private static final Duration WINDOW = Duration.ofSeconds(5);
  private static final double TAIL_LIMIT_MS = 200;

  public SoakStage() {
    super(
        STAGE,
        true,
        Stream.concat(Stream.of(RATE_VARIABLE, SECONDS_VARIABLE), Services.PIPELINE_TUNING.stream())
            .toList());
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    double rate = BenchContext.envNumber(RATE_VARIABLE, 1500);
    Duration total =
        Duration.ofSeconds((long) BenchContext.envNumber(SECONDS_VARIABLE, ctx.quick ? 120 : 300));
    Webhooks webhooks = Pipeline.webhooks();
    List<Double> p99s = new ArrayList<>();
    try (Pipeline pipeline = Pipeline.start(ctx);
        OpenLoopLoad load = new OpenLoopLoad(256, 1)) {
      // Same warm-up as the e2e stage: otherwise the first minutes measure C2, not the pipeline.
      res.note(
          STAGE,
          PipelineWindow.warmUntilJitSettles(
              load,
              pipeline.ingress().port(),
              ctx.bootstrap(),
              pipeline.topics(),
              rate,
              Duration.ofSeconds(ctx.quick ? 60 : 120),
              webhooks));
      long tripsBefore = ProcessorMeters.roundTrips(pipeline.processorRegistry());
      double decidedBefore = ProcessorMeters.decided(pipeline.processorRegistry());
      long start = System.nanoTime();
      while (System.nanoTime() - start < total.toNanos()) {
        Map<String, Long> before = ThreadCpu.sample();
        Map<String, BrokerRequests.Count> brokerBefore =
            ctx.probes.brokerRequests() ? BrokerRequests.sample() : Map.of();
        Map<String, Long> tcpBefore = ctx.probes.tcp() ? TcpCounters.sample() : Map.of();
        HistogramSnapshot applyBefore = receiveToApply(pipeline.processorRegistry());
        HistogramSnapshot readBefore = receiveToRead(pipeline.processorRegistry());
        long processBefore = ThreadCpu.processMillis();
        double commitsBefore = commits(pipeline);
        StreamThreadTime kafkaBefore = StreamThreadTime.sample(pipeline);
        ProcessorMeters.RedisTrips redisBefore =
            ProcessorMeters.redisTrips(pipeline.processorRegistry());
        long at = (System.nanoTime() - start) / 1_000_000_000L;
        Instant from = Instant.now();
        PipelineWindow.Step step =
            PipelineWindow.measure(
                load,
                pipeline.ingress().port(),
                ctx.bootstrap(),
                pipeline.topics(),
                rate,
                Duration.ZERO,
                WINDOW,
                webhooks);
        HistogramSnapshot applyAfter = receiveToApply(pipeline.processorRegistry());
        double applied = applyAfter.count() - applyBefore.count();
        ProcessorMeters.RedisTrips redisAfter =
            ProcessorMeters.redisTrips(pipeline.processorRegistry());
        StreamThreadTime kafka = StreamThreadTime.sample(pipeline).minus(kafkaBefore);
        double applyP99 = p99Bound(applyBefore.histogramCounts(), applyAfter.histogramCounts());
        double readP99 =
            p99Bound(
                readBefore.histogramCounts(),
                receiveToRead(pipeline.processorRegistry()).histogramCounts());
        String line =
            String.format(
                "t=%ds (%s..%s) e2e p50 %.0f p99 %.0f max %.0f ms, receive -> read p99 <= %.0f ms,"
                    + " receive -> apply mean %.0f p99 <= %.0f ms, ingress p99 %.1f ms,"
                    + " seen %d/%d (%d stale), %.0f commits/s, Redis %.0f trips %.0f ms;"
                    + " stream threads blocked on Kafka %s; CPU ms: process %d,"
                    + " by thread: %s",
                at,
                from,
                Instant.now(),
                step.e2e().p50(),
                step.e2e().p99(),
                step.e2e().max(),
                readP99,
                applied > 0
                    ? (applyAfter.total(TimeUnit.MILLISECONDS)
                            - applyBefore.total(TimeUnit.MILLISECONDS))
                        / applied
                    : Double.NaN,
                applyP99,
                step.ingress().latency().p99(),
                step.seen(),
                step.ingress().ok(),
                step.stale(),
                (commits(pipeline) - commitsBefore) / WINDOW.toSeconds(),
                (double) (redisAfter.count() - redisBefore.count()),
                redisAfter.waitMillis() - redisBefore.waitMillis(),
                kafka,
                ThreadCpu.processMillis() - processBefore,
                ThreadCpu.top(before, ThreadCpu.sample(), 8));
        if (ctx.probes.brokerRequests()) {
          line +=
              "; broker requests/handler ms:"
                  + BrokerRequests.top(brokerBefore, BrokerRequests.sample(), 6);
        }
        if (ctx.probes.tcp()) {
          line += "; TCP (whole machine): " + TcpCounters.between(tcpBefore, TcpCounters.sample());
        }
        res.note(STAGE, line); // printed as it is noted
        // A window whose events did not all arrive, or whose requests failed, is a bad window
        // whatever the latency of those that did.
        boolean complete = step.complete() && step.e2e().count() > 0;
        p99s.add(complete ? step.e2e().p99() : Double.POSITIVE_INFINITY);
      }
      // The processor stage's 1/16 is for a backlog, where batches are full; at a live rate a
      // drain's round trip (one per stream thread, D45) holds what arrived since the last drain.
      long trips = ProcessorMeters.roundTrips(pipeline.processorRegistry()) - tripsBefore;
      double decided = ProcessorMeters.decided(pipeline.processorRegistry()) - decidedBefore;
      res.add(
          Row.figure(
              STAGE,
              String.format("Redis round trips per input event at %,.0f/s", rate),
              decided > 0 ? trips / decided : Double.NaN,
              "trips/event"));
      res.note(
          STAGE,
          String.format(
              "%,d Redis round trips for %,.0f input events decided in the measured windows",
              trips, decided));
    }
    long over = p99s.stream().filter(p -> p > TAIL_LIMIT_MS).count();
    res.add(
        Row.figure(
            STAGE,
            String.format(
                "5 s windows at %,.0f/s with e2e p99 > %.0f ms or events missing",
                rate, TAIL_LIMIT_MS),
            over,
            "windows of " + p99s.size()));
    res.add(
        Row.figure(
            STAGE,
            String.format("worst complete 5 s window's e2e p99 at %,.0f/s", rate),
            p99s.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).max().orElse(0),
            "ms"));
  }

  /** Transactions the processor's stream threads committed since start. */
  private static double commits(Pipeline pipeline) {
    return streamsMetric(pipeline, "stream-thread-metrics", "commit-total");
  }

  /** A Streams client metric summed over its threads and clients (0 if it has none). */
  private static double streamsMetric(Pipeline pipeline, String group, String name) {
    return ProcessorMeters.streamsMetric(pipeline.processor().streams(), group, name).sum();
  }

  /**
   * Time (ms) the stream threads spent blocked on Kafka (KIP-761: polls, flushes, transaction
   * calls), and the part of it their producers spent flushing and in the commit's two transaction
   * calls. Next to the thread's CPU and Redis wait, it says where a window's 5 s went.
   */
  record StreamThreadTime(double blocked, double flush, double sendOffsets, double commitTxn) {
    static StreamThreadTime sample(Pipeline pipeline) {
      return new StreamThreadTime(
          streamsMetric(pipeline, "stream-thread-metrics", "blocked-time-ns-total") / 1e6,
          streamsMetric(pipeline, "producer-metrics", "flush-time-ns-total") / 1e6,
          streamsMetric(pipeline, "producer-metrics", "txn-send-offsets-time-ns-total") / 1e6,
          streamsMetric(pipeline, "producer-metrics", "txn-commit-time-ns-total") / 1e6);
    }

    StreamThreadTime minus(StreamThreadTime earlier) {
      return new StreamThreadTime(
          blocked - earlier.blocked,
          flush - earlier.flush,
          sendOffsets - earlier.sendOffsets,
          commitTxn - earlier.commitTxn);
    }

    @Override
    public String toString() {
      return String.format(
          "%.0f ms (flush %.0f, send offsets %.0f, commit %.0f)",
          blocked, flush, sendOffsets, commitTxn);
    }
  }

  /**
   * The upper bound (ms) of the bucket that holds the 99th percentile of what was recorded between
   * two snapshots: a window's tail, to a bucket's precision (buckets are 10-25% apart).
   */
  static double p99Bound(CountAtBucket[] before, CountAtBucket[] after) {
    if (after.length == 0 || before.length != after.length) {
      return Double.NaN;
    }
    double total = after[after.length - 1].count() - before[before.length - 1].count();
    if (total <= 0) {
      return Double.NaN;
    }
    for (int i = 0; i < after.length; i++) {
      if (after[i].count() - before[i].count() >= 0.99 * total) {
        return after[i].bucket(TimeUnit.MILLISECONDS);
      }
    }
    return Double.NaN;
  }

  /**
   * The processor's own latency from the ingress receiving a webhook to applying it so far: count,
   * total and cumulative bucket counts (Pipeline adds the buckets). It covers the ingress's produce
   * and the stream thread's queueing, not the commit and the read_committed reader, so a window
   * whose tail rises with its e2e tail stalled before the apply.
   */
  private static HistogramSnapshot receiveToApply(MeterRegistry registry) {
    return snapshot(registry, ProcessorMetrics.END_TO_END);
  }

  /**
   * The same up to the stream thread reading the event: a window whose receive -> read tail rises
   * with its receive -> apply tail stalled before the thread got the event (consumer lag, a thread
   * away from its poll), not in the batching and decisions after it.
   */
  private static HistogramSnapshot receiveToRead(MeterRegistry registry) {
    return snapshot(registry, ProcessorMetrics.RECEIVE_TO_READ);
  }

  private static HistogramSnapshot snapshot(MeterRegistry registry, String timerName) {
    Timer timer = registry.find(timerName).timer();
    return timer == null ? HistogramSnapshot.empty(0, 0, 0) : timer.takeSnapshot();
  }
}
