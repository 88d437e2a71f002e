package dev.runlane.bench.stage;

import static dev.runlane.bench.load.PipelineWindow.measure;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.load.PipelineWindow.Step;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.stage.CostDeployments.Deployment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cost stage's capacity search (D92): the highest step whose window saw every webhook through
 * with p50 under 250 ms (the e2e stage's rule, steps of 1k/s from 1k/s; a step that misses gets a
 * second window, as there). Each step also reads the cores each process used, and the search
 * reports what one more webhook costs each process between its lowest and its highest kept-up step:
 * the fixed per-second costs (polls, commits, heartbeats) cancel out, which they do not in the CPU
 * windows at one rate (D103).
 */
final class CapacitySearch {
  static final int STEP = 1000;
  static final int TOP = 30_000;

  /** The highest rate kept up, and the marginal CPU-us per webhook by component and in total. */
  record Result(double rate, Map<String, Double> marginalMicros) {}

  private CapacitySearch() {}

  static Result run(
      BenchContext ctx,
      CostDeployments d,
      Deployment dep,
      OpenLoopLoad load,
      Duration reorderWindow,
      Webhooks webhooks,
      int rep)
      throws Exception {
    Duration window = Duration.ofSeconds(ctx.quick ? 5 : 10);
    Duration warmup = Duration.ofSeconds(3);
    double best = 0;
    StepCpu.Cores first = null;
    StepCpu.Cores last = null;
    List<String> trace = new ArrayList<>();
    for (int r = STEP; r <= TOP; r += STEP) {
      boolean keptUp = false;
      for (int attempt = 1; attempt <= 2 && !keptUp; attempt++) {
        StepCpu cpu = StepCpu.start(dep.components());
        Step s =
            measure(load, dep.port(), d.bootstrap(), dep.topics(), r, warmup, window, webhooks);
        StepCpu.Cores cores = cpu.end();
        keptUp = s.keptUp(reorderWindow);
        if (keptUp) {
          first = first == null ? cores : first;
          last = cores;
        }
        trace.add(
            String.format(
                "%,d/s%s %s (p50 %.0f ms; %s%s)",
                r,
                attempt > 1 ? " (2nd window)" : "",
                keptUp ? "kept up" : "missed",
                s.e2e().p50(),
                cores,
                keptUp ? "" : "; " + s.seen() + " seen, ingress " + s.ingress()));
      }
      if (!keptUp) {
        break;
      }
      best = r;
    }
    Map<String, Double> marginal = marginalMicros(first, last, best - STEP);
    System.out.printf("  %s capacity, rep %d: %,.0f/s%n", dep.name(), rep, best);
    ctx.results.note(
        CostStage.STAGE,
        String.format(
            "rep %d, %s capacity search (%d s windows after %d s at the rate): %s%s; CPU-us per"
                + " further webhook from %,d/s to %,.0f/s: %s",
            rep,
            dep.name(),
            window.toSeconds(),
            warmup.toSeconds(),
            String.join(", ", trace),
            best >= TOP ? "; kept up at the top step: a lower bound" : "",
            STEP,
            best,
            marginal.isEmpty() ? "n/a (one step kept up at most)" : micros(marginal)));
    return new Result(best, marginal);
  }

  private static String micros(Map<String, Double> us) {
    StringBuilder out = new StringBuilder();
    us.forEach(
        (k, v) ->
            out.append(out.length() == 0 ? "" : ", ").append(k).append(String.format(" %.0f", v)));
    return out.toString();
  }

  /**
   * What each further webhook per second cost each component between two kept-up steps {@code
   * rateDelta} apart, in CPU microseconds, and their total; empty without two steps.
   */
  static Map<String, Double> marginalMicros(
      StepCpu.Cores low, StepCpu.Cores high, double rateDelta) {
    Map<String, Double> out = new LinkedHashMap<>();
    if (low == null || high == null || rateDelta <= 0) {
      return out;
    }
    double total = 0;
    for (Map.Entry<String, Double> e : high.byComponent().entrySet()) {
      double us =
          (e.getValue() - low.byComponent().getOrDefault(e.getKey(), 0.0)) * 1e6 / rateDelta;
      out.put(e.getKey(), us);
      total += us;
    }
    out.put(CostStage.TOTAL, total);
    return out;
  }
}
