package dev.runlane.bench.stage;

import dev.runlane.bench.probe.ProcessCpu;
import dev.runlane.bench.probe.ThreadCpu;
import dev.runlane.bench.stage.CostDeployments.Component;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cores each process of a pipeline used over one capacity step, and how busy the whole machine
 * was: a pipeline that stops keeping up while its processes leave CPU unused is limited by waits,
 * and the cores' rise from step to step is what each further webhook costs (D103).
 */
final class StepCpu {
  private final List<Component> components;
  private final long[] before;
  private final long selfBefore;
  private final long[] machineBefore;
  private final long t0;

  /** Cores by component, the bench's own JVM (load generator and reader), the machine's share. */
  record Cores(Map<String, Double> byComponent, double bench, double machineBusy) {
    @Override
    public String toString() {
      StringBuilder out = new StringBuilder("cores:");
      byComponent.forEach((k, v) -> out.append(String.format(" %s %.2f,", k, v)));
      out.append(String.format(" bench %.2f", bench));
      if (!Double.isNaN(machineBusy)) {
        out.append(String.format("; machine %.0f%% busy", 100 * machineBusy));
      }
      return out.toString();
    }
  }

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

  Cores end() {
    double wallMillis = (System.nanoTime() - t0) / 1e6;
    Map<String, Double> cores = new LinkedHashMap<>();
    for (int i = 0; i < before.length; i++) {
      long used = components.get(i).cpuMillis().getAsLong() - before[i];
      cores.put(components.get(i).name(), used / wallMillis);
    }
    long[] machine = ProcessCpu.machineMillis();
    long total = machine[1] - machineBefore[1];
    return new Cores(
        cores,
        (ThreadCpu.processMillis() - selfBefore) / wallMillis,
        total > 0 ? (double) (machine[0] - machineBefore[0]) / total : Double.NaN);
  }
}
