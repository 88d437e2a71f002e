package dev.runlane.bench.stage;

import static dev.runlane.bench.load.PipelineWindow.measure;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.load.PipelineWindow.Step;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.ThreadCpu;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.bench.report.Spread;
import dev.runlane.bench.stage.CostDeployments.Component;
import dev.runlane.bench.stage.CostDeployments.Deployment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Stage 5: what a webhook costs end to end, next to the bare pipeline in the same run (issue 40,
 * D92): CPU time per webhook of each process (ingress, processor, broker, Redis) at a fixed rate
 * well below capacity, and the highest rate each pipeline keeps up with, three repetitions each,
 * reported as the median of the repetitions' runlane / bare ratios with their range; then the
 * processor as three JVMs next to one on 24 partitions ({@link ScaleOutCost}, D101).
 */
public final class CostStage extends Stage {
  static final String STAGE = "cost";

  /**
   * The offered rate of the CPU windows, webhooks/s: 2,000 by default, 1,000 with {@code --quick}.
   * A quick run is what a loaded machine gets, and there runlane's capacity fell to 2,000/s and
   * below (D92): the rate must stay well under it, or the figure measures a backlog's batching.
   */
  static final String RATE_VARIABLE = "BENCH_COST_RATE";

  /**
   * Repetitions (3), and whether each searches each pipeline's capacity (1) and runs the scale-out
   * part (1): a comparison of two builds' or settings' CPU per webhook needs neither the search nor
   * the scale-out part, nor their 25 minutes (D92). {@code BENCH_COST_SCALE_OUT=only} runs the
   * scale-out part alone, without the runlane and bare pipelines or their windows: about 4 minutes
   * {@code --quick} with 2 repetitions, so that two builds fit one lock hold (D104).
   */
  static final String REPETITIONS_VARIABLE = "BENCH_COST_REPETITIONS";

  static final String CAPACITY_VARIABLE = "BENCH_COST_CAPACITY";
  static final String SCALE_OUT_VARIABLE = "BENCH_COST_SCALE_OUT";

  /** The value of {@link #SCALE_OUT_VARIABLE} that runs the scale-out part alone. */
  static final String SCALE_OUT_ONLY = "only";

  /**
   * Stream threads of the scale-out part's one instance alone (an investigation: by default it has
   * the three's, as deployed), to tell a bound by its threads' waits from a cost per task (D104).
   */
  static final String SCALE_OUT_ONE_THREADS_VARIABLE = "BENCH_COST_SCALE_OUT_ONE_THREADS";

  static final double CPU_RATIO_TARGET = 1.5;
  static final double CAPACITY_RATIO_TARGET = 0.8;

  /** The components a row compares, in the order of the table; Redis is runlane's alone. */
  static final List<String> COMPONENTS = List.of("ingress", "processor", "broker", "Redis");

  static final String TOTAL = "total";

  /** {@link #SCALE_OUT_ONE_THREADS_VARIABLE}'s value, trimmed, or null when it is not set. */
  static String scaleOutOneThreads() {
    String threads = System.getenv(SCALE_OUT_ONE_THREADS_VARIABLE);
    return threads == null || threads.isBlank() ? null : threads.trim();
  }

  public CostStage() {
    super(
        STAGE,
        Stream.concat(
                Services.PIPELINE_TUNING.stream(),
                Stream.of(
                    RATE_VARIABLE,
                    REPETITIONS_VARIABLE,
                    CAPACITY_VARIABLE,
                    SCALE_OUT_VARIABLE,
                    SCALE_OUT_ONE_THREADS_VARIABLE))
            .toList());
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    double rate = BenchContext.envNumber(RATE_VARIABLE, ctx.quick ? 1000 : 2000);
    int repetitions = (int) BenchContext.envNumber(REPETITIONS_VARIABLE, 3, 1);
    String scaleOut = System.getenv(SCALE_OUT_VARIABLE);
    boolean scaleOutOnly = SCALE_OUT_ONLY.equals(scaleOut == null ? null : scaleOut.trim());
    Duration window = Duration.ofSeconds(ctx.quick ? 10 : 30);
    Duration settle = Duration.ofSeconds(ctx.quick ? 5 : 10);
    Duration warm = Duration.ofSeconds(ctx.quick ? 30 : 60);
    Webhooks webhooks = Pipeline.webhooks();
    try (CostDeployments d = CostDeployments.start();
        OpenLoopLoad load = new OpenLoopLoad(256, 1)) {
      if (scaleOutOnly) {
        ctx.results.note(
            STAGE,
            SCALE_OUT_VARIABLE
                + "=only: the scale-out part alone, no runlane or bare pipeline windows (D104)");
      } else {
        pipelines(ctx, d, load, rate, repetitions, settle, window, warm, webhooks);
      }
      if (scaleOutOnly || BenchContext.envNumber(SCALE_OUT_VARIABLE, 1, 0) > 0) {
        ScaleOutCost.run(ctx, d, load, rate, repetitions, settle, window, warm, webhooks);
      }
    }
  }

  /**
   * The stage's own part: runlane's pipeline next to the bare one, warmed up, an idle window, the
   * CPU windows and the capacity search over the repetitions, their rows; then both stopped.
   */
  private static void pipelines(
      BenchContext ctx,
      CostDeployments d,
      OpenLoopLoad load,
      double rate,
      int repetitions,
      Duration settle,
      Duration window,
      Duration warm,
      Webhooks webhooks)
      throws Exception {
    Results res = ctx.results;
    boolean searchCapacity = BenchContext.envNumber(CAPACITY_VARIABLE, 1, 0) > 0;
    Duration reorderWindow = Services.tunedProcessor().reorderWindow();
    Deployment runlane = d.runlane();
    Deployment bare = d.bare();
    res.note(STAGE, "processes: " + String.join("; ", d.logs()) + "; Redis pid " + d.redis().pid());
    res.note(
        STAGE,
        "bare pipeline: the bare ingress (Vert.x, the ingress's loops and producer settings, no"
            + " verification or parsing) -> a Kafka Streams application copying each record ("
            + d.bareStreamsSettings()
            + ", the processor's client settings) -> a read_committed reader; broker, ingresses,"
            + " processor and bare Streams each in a JVM of its own (-Xmx1g), the load generator"
            + " and the reader in the bench's JVM; the idle pipeline stays up while the other is"
            + " measured");
    for (Deployment dep : List.of(runlane, bare)) {
      measure(load, dep.port(), d.bootstrap(), dep.topics(), rate, Duration.ZERO, warm, webhooks);
    }
    idleWindow(res, runlane, bare, rate, Duration.ofSeconds(10));
    res.note(
        STAGE,
        String.format(
            "warm-up: %d s at %,.0f/s through each pipeline, discarded; each CPU window is"
                + " %d s after %d s at the rate, discarded",
            warm.toSeconds(), rate, window.toSeconds(), settle.toSeconds()));
    Map<String, Map<String, List<Double>>> cpu = new LinkedHashMap<>();
    Map<String, List<Double>> capacity = new LinkedHashMap<>();
    Map<String, Map<String, List<Double>>> marginal = new LinkedHashMap<>();
    for (Deployment dep : List.of(runlane, bare)) {
      cpu.put(dep.name(), new LinkedHashMap<>());
      capacity.put(dep.name(), new ArrayList<>());
      marginal.put(dep.name(), new LinkedHashMap<>());
    }
    for (int rep = 1; rep <= repetitions; rep++) {
      // Which goes first alternates, so that a drift over the run favours neither.
      List<Deployment> order = rep % 2 == 1 ? List.of(runlane, bare) : List.of(bare, runlane);
      for (Deployment dep : order) {
        Duration reorder = dep == runlane ? reorderWindow : Duration.ZERO;
        Map<String, Double> us =
            cpuWindow(ctx, d, dep, load, rate, settle, window, webhooks, rep, reorder);
        us.forEach((k, v) -> cpu.get(dep.name()).computeIfAbsent(k, x -> new ArrayList<>()).add(v));
      }
      for (Deployment dep : searchCapacity ? order : List.<Deployment>of()) {
        Duration reorder = dep == runlane ? reorderWindow : Duration.ZERO;
        CapacitySearch.Result found = CapacitySearch.run(ctx, d, dep, load, reorder, webhooks, rep);
        capacity.get(dep.name()).add(found.rate());
        found
            .marginalMicros()
            .forEach(
                (k, v) ->
                    marginal.get(dep.name()).computeIfAbsent(k, x -> new ArrayList<>()).add(v));
      }
    }
    report(res, rate, cpu.get(runlane.name()), cpu.get(bare.name()), capacity);
    reportMarginal(res, marginal.get(runlane.name()), marginal.get(bare.name()));
    d.stop(runlane.name());
    d.stop(bare.name());
  }

  /**
   * One window at {@code rate} (after {@code settle} at it, discarded): each component's CPU
   * milliseconds over the window, per webhook answered 200, in microseconds; NaN throughout when
   * the pipeline did not keep up in it (the e2e stage's rule: every webhook answered 200 and seen,
   * p50 under 250 ms).
   */
  static Map<String, Double> cpuWindow(
      BenchContext ctx,
      CostDeployments d,
      Deployment dep,
      OpenLoopLoad load,
      double rate,
      Duration settle,
      Duration window,
      Webhooks webhooks,
      int rep,
      Duration reorderWindow)
      throws Exception {
    measure(load, dep.port(), d.bootstrap(), dep.topics(), rate, Duration.ZERO, settle, webhooks);
    List<Component> read = new ArrayList<>(dep.components());
    if (!read.contains(d.redis())) {
      read.add(d.redis()); // idle under the bare pipeline: noted, not counted
    }
    long[] before = sample(read);
    long selfBefore = ThreadCpu.processMillis();
    long t0 = System.nanoTime();
    Step step =
        measure(
            load, dep.port(), d.bootstrap(), dep.topics(), rate, Duration.ZERO, window, webhooks);
    double seconds = (System.nanoTime() - t0) / 1e9;
    long[] after = sample(read);
    long self = ThreadCpu.processMillis() - selfBefore;
    long n = step.ingress().ok();
    Map<String, Double> us = new LinkedHashMap<>();
    double total = 0;
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < read.size(); i++) {
      Component c = read.get(i);
      double v = perWebhookMicros(after[i] - before[i], n);
      boolean counted = dep.components().contains(c);
      if (counted) {
        us.put(c.name(), v);
        total += v;
      }
      line.append(String.format(", %s %.0f%s", c.name(), v, counted ? "" : " (idle, not counted)"));
    }
    us.put(TOTAL, total);
    // A pipeline behind the rate drains a backlog in large batches, cheaper per event than the
    // live rate the figure is for: such a window does not count either (D92).
    boolean complete = step.keptUp(reorderWindow);
    ctx.results.note(
        STAGE,
        String.format(
            "rep %d, %s @ %,.0f/s: %,d webhooks answered 200, %,d seen, in %.1f s; CPU-us per"
                + " webhook: total %.0f%s; the load generator and reader (bench JVM) %.0f;"
                + " ingress 200 -> visible p50 %.0f ms, p99 %.0f ms%s",
            rep,
            dep.name(),
            rate,
            n,
            step.seen(),
            seconds,
            total,
            line,
            perWebhookMicros(self, n),
            step.e2e().p50(),
            step.e2e().p99(),
            complete
                ? ""
                : "; NOT kept up (every webhook answered 200 and seen, p50 < 250 ms): the"
                    + " window does not count: "
                    + step.ingress()));
    if (!complete) {
      us.replaceAll((k, v) -> Double.NaN);
    }
    return us;
  }

  /**
   * Both pipelines with no webhooks for {@code idle}: the cores each process uses doing nothing
   * (polls, commits, punctuations, heartbeats). Spread over the CPU windows' {@code rate}, that is
   * the part of their CPU per webhook that does not grow with the rate, where the capacity search's
   * CPU per further webhook is the part that does (D103). The broker serves both pipelines.
   */
  private static void idleWindow(
      Results res, Deployment runlane, Deployment bare, double rate, Duration idle)
      throws InterruptedException {
    Thread.sleep(Duration.ofSeconds(2).toMillis()); // the warm-up's last answers and commits
    List<StepCpu> steps =
        List.of(StepCpu.start(runlane.components()), StepCpu.start(bare.components()));
    Thread.sleep(
        idle.toMillis()); // the window itself: a measured period, not a wait for a condition
    for (int i = 0; i < 2; i++) {
      Deployment dep = i == 0 ? runlane : bare;
      StepCpu.Cores cores = steps.get(i).end();
      StringBuilder perWebhook = new StringBuilder();
      cores
          .byComponent()
          .forEach((k, v) -> perWebhook.append(String.format(" %s %.0f,", k, v * 1e6 / rate)));
      res.note(
          STAGE,
          String.format(
              "%s idle (no webhooks for %d s): %s; at %,.0f/s that is CPU-us per webhook:%s"
                  + " (the broker's serves both pipelines)",
              dep.name(), idle.toSeconds(), cores, rate, perWebhook));
    }
  }

  /** CPU microseconds per webhook from CPU milliseconds over {@code webhooks}; NaN for none. */
  static double perWebhookMicros(long cpuMillis, long webhooks) {
    return webhooks <= 0 ? Double.NaN : cpuMillis * 1000.0 / webhooks;
  }

  private static long[] sample(List<Component> components) {
    long[] out = new long[components.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = components.get(i).cpuMillis().getAsLong();
    }
    return out;
  }

  private static void report(
      Results res,
      double rate,
      Map<String, List<Double>> runlane,
      Map<String, List<Double>> bare,
      Map<String, List<Double>> capacity) {
    for (String c : Stream.concat(COMPONENTS.stream(), Stream.of(TOTAL)).toList()) {
      Spread r = Spread.of(runlane.get(c));
      if (!bare.containsKey(c)) {
        res.add(
            Row.figure(
                STAGE,
                String.format(
                    "CPU-us per webhook @ %,.0f/s, %s (runlane only; median, range %s)",
                    rate, c, r.value()),
                r.median(),
                "us"));
        continue;
      }
      Spread b = Spread.of(bare.get(c));
      Spread ratio = Spread.ofRatios(runlane.get(c), bare.get(c));
      Row row =
          Row.figure(
                  STAGE,
                  String.format(
                      "CPU-us per webhook @ %,.0f/s, %s%s: runlane %s, bare %s, ratio %s",
                      rate,
                      c,
                      c.equals(TOTAL) ? " (ingress + processor + broker + Redis)" : "",
                      r.value(),
                      b.value(),
                      ratio.ratio()),
                  r.median(),
                  "us")
              .against(
                  "bare pipeline" + (c.equals("processor") ? " (copying Streams app)" : ""),
                  b.median(),
                  ratio.median());
      res.add(
          c.equals(TOTAL)
              ? row.withTarget(
                  "<= 1.5x bare (median of the repetitions)",
                  ratio.count() > 0 && ratio.median() <= CPU_RATIO_TARGET)
              : row);
    }
    if (capacity.get("runlane").isEmpty()) {
      res.note(STAGE, "capacity not searched (" + CAPACITY_VARIABLE + "=0)");
      return;
    }
    Spread r = Spread.of(capacity.get("runlane"));
    Spread b = Spread.of(capacity.get("bare"));
    Spread ratio = Spread.ofRatios(capacity.get("runlane"), capacity.get("bare"));
    res.add(
        Row.figure(
                STAGE,
                String.format(
                    "capacity, events/s kept up end to end: runlane %s, bare %s, ratio %s",
                    r.value(), b.value(), ratio.ratio()),
                r.median(),
                "events/s")
            .against("bare pipeline", b.median(), ratio.median())
            .withTarget(
                ">= 0.8x bare (median of the repetitions)",
                ratio.count() > 0 && ratio.median() >= CAPACITY_RATIO_TARGET));
    res.add(
        Row.figure(
            STAGE,
            "instructions per webhook (perf stat -e instructions): " + perfInstructions(),
            Double.NaN,
            "instructions"));
  }

  /**
   * What one more webhook costs each component between the capacity search's lowest and highest
   * kept-up steps, runlane next to bare (no target): the figure the capacity ratio follows once
   * both pipelines are busy, where the CPU row at one low rate is mostly fixed costs (D103).
   */
  static void reportMarginal(
      Results res, Map<String, List<Double>> runlane, Map<String, List<Double>> bare) {
    for (String c : Stream.concat(COMPONENTS.stream(), Stream.of(TOTAL)).toList()) {
      if (!runlane.containsKey(c)) {
        continue;
      }
      Spread r = Spread.of(runlane.get(c));
      if (!bare.containsKey(c)) {
        res.add(
            Row.figure(
                STAGE,
                String.format(
                    "CPU-us per further webhook (from 1k/s to capacity), %s (runlane only): %s",
                    c, r.value()),
                r.median(),
                "us"));
        continue;
      }
      Spread b = Spread.of(bare.get(c));
      Spread ratio = Spread.ofRatios(runlane.get(c), bare.get(c));
      res.add(
          Row.figure(
                  STAGE,
                  String.format(
                      "CPU-us per further webhook (from 1k/s to each pipeline's capacity), %s:"
                          + " runlane %s, bare %s, ratio %s",
                      c, r.value(), b.value(), ratio.ratio()),
                  r.median(),
                  "us")
              .against("bare pipeline", b.median(), ratio.median()));
    }
  }

  /**
   * Whether this machine counts instructions for {@code perf stat}: a VM often does not expose the
   * hardware counters, and perf then prints {@code <not supported>}.
   */
  static String perfInstructions() {
    try {
      Process p =
          new ProcessBuilder("perf", "stat", "-x,", "-e", "instructions", "--", "true")
              .redirectErrorStream(true)
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        return "not measured: perf stat failed (" + out.replace('\n', ' ') + ")";
      }
      return out.contains("<not supported>") || out.contains("<not counted>")
          ? "not measured: this machine's perf does not count instructions (<not supported>;"
              + " a VM without hardware counters)"
          : "not measured: perf counts instructions here, but the stage does not yet read them";
    } catch (IOException e) {
      return "not measured: no perf on this machine";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "not measured: interrupted";
    }
  }
}
