package dev.runlane.bench.stage;

import dev.runlane.bench.probe.ProcessCpu;
import dev.runlane.bench.probe.ThreadCpu;
import dev.runlane.bench.stage.CostDeployments.Component;
import java.util.List;

/**
 * The cores each process of a pipeline used over one capacity step, and how busy the whole machine
 * was: a pipeline that stops keeping up while the machine still has idle CPU is limited by waits,
 * not by its CPU per event (D103).
 */
final class StepCpu {
  private final List<Component> components;
  private final long[] before;
  private final long selfBefore;
  private final long[] machineBefore;
  private final long t0;

  private StepCpu(List<Component> components) {
    this.components = components;
    this.before = new long[components.size()];
    for (int i = 0; i < before.length; i++) {
      before[i] = components.get(i).cpuMillis().getAsLong();
    }
    this.selfBefore = ThreadCpu.processMillis();
    this.machineBefore = ProcessCpu.machineMillis();
    this.t0 = System.nanoTime();
  }

  static StepCpu start(List<Component> components) {
    return new StepCpu(components);
  }

  /**
   * E.g. {@code cores: ingress 0.61, processor 0.80, broker 0.40, bench 0.30; machine 95% busy}.
   */
  String end() {
    double wallMillis = (System.nanoTime() - t0) / 1e6;
    StringBuilder out = new StringBuilder("cores:");
    for (int i = 0; i < before.length; i++) {
      long used = components.get(i).cpuMillis().getAsLong() - before[i];
      out.append(String.format(" %s %.2f,", components.get(i).name(), used / wallMillis));
    }
    out.append(String.format(" bench %.2f", (ThreadCpu.processMillis() - selfBefore) / wallMillis));
    long[] machine = ProcessCpu.machineMillis();
    long total = machine[1] - machineBefore[1];
    if (total > 0) {
      out.append(
          String.format("; machine %.0f%% busy", 100.0 * (machine[0] - machineBefore[0]) / total));
    }
    return out.toString();
  }
}
