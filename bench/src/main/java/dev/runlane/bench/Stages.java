package dev.runlane.bench;

import dev.runlane.bench.stage.CostStage;
import dev.runlane.bench.stage.EndToEndStage;
import dev.runlane.bench.stage.GenerationsStage;
import dev.runlane.bench.stage.IngressStage;
import dev.runlane.bench.stage.ProcessorStage;
import dev.runlane.bench.stage.RebuildStage;
import dev.runlane.bench.stage.RecoveryStage;
import dev.runlane.bench.stage.RedisClusterStage;
import dev.runlane.bench.stage.RestartStage;
import dev.runlane.bench.stage.SinkStage;
import dev.runlane.bench.stage.SoakStage;
import dev.runlane.bench.stage.TraceStage;
import dev.runlane.bench.stage.VerifyStage;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The registry of stages: the command line's names, its usage text, and the order of a run. A new
 * stage is a {@link Stage} added to {@link #ALL}.
 */
final class Stages {
  /**
   * Every stage, in the order a run takes them whatever order they were named in: the table reads
   * in this order, and each stage was measured after those before it (e2e after ingress).
   */
  static final List<Stage> ALL =
      List.of(
          new VerifyStage(),
          new IngressStage(),
          new ProcessorStage(),
          new EndToEndStage(),
          new CostStage(),
          new RecoveryStage(),
          new RestartStage(),
          new RebuildStage(),
          new GenerationsStage(),
          new SinkStage(),
          new TraceStage(),
          new SoakStage(),
          new RedisClusterStage());

  private Stages() {}

  /** The names of the stages a run takes when none is named ({@code optIn} false), or the rest. */
  static List<String> names(boolean optIn) {
    return ALL.stream().filter(s -> s.optIn() == optIn).map(Stage::name).toList();
  }

  static boolean exists(String name) {
    return ALL.stream().anyMatch(s -> s.name().equals(name));
  }

  /** The stages named, in the order of {@link #ALL}; every stage but the opt-in ones if none. */
  static List<Stage> select(Collection<String> names) {
    return ALL.stream()
        .filter(s -> names.isEmpty() ? !s.optIn() : names.contains(s.name()))
        .toList();
  }

  /** Every stage's environment variables, each once. */
  static Set<String> variables() {
    Set<String> out = new LinkedHashSet<>();
    ALL.forEach(s -> out.addAll(s.variables()));
    return out;
  }

  static String usage() {
    return "usage: java -jar runlane-bench.jar [--quick] [--out DIR] [stage...]\n  stages: "
        + String.join(" ", names(false))
        + " (default: all); opt-in: "
        + String.join(" ", names(true));
  }

  static String unknown(String name) {
    return "unknown stage '" + name + "'; stages: " + names(false) + ", opt-in: " + names(true);
  }
}
