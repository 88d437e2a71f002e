package dev.runlane.bench.stage;

import static dev.runlane.bench.load.PipelineWindow.measure;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.Child;
import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.bench.report.Spread;
import dev.runlane.bench.stage.CostDeployments.Deployment;
import dev.runlane.common.http.AdminServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.GroupState;

/**
 * The cost stage's last part, "scale-out costs nothing" (issue 40, D101): the processor's CPU per
 * webhook as three JVMs of one application id on 24 input partitions, summed, next to one JVM on 24
 * partitions of its own, at the stage's rate, in the same run; the proxy on one machine for
 * "throughput grows with instances" (G5).
 */
final class ScaleOutCost {
  /** Input partitions of both deployments: 8 for each of three instances. */
  static final int PARTITIONS = 24;

  static final int INSTANCES = 3;
  static final double RATIO_TARGET = 1.1;

  private static final Duration SPREAD_TIMEOUT = Duration.ofMinutes(2);

  /**
   * One deployment of the part: the pipeline as the cost windows read it, its processors'
   * application id, their static instance ids (none for one instance) and admin ports.
   */
  record Instances(
      Deployment deployment, String appId, List<String> instanceIds, List<Integer> adminPorts) {}

  private ScaleOutCost() {}

  /**
   * Starts both deployments on the stage's broker and Redis, warms each up, then alternates their
   * windows over the repetitions and adds the row; each three-instance window is preceded by the
   * check that every instance holds input partitions.
   */
  static void run(
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
    Instances one = d.scaleOut("one", 1);
    Instances three = d.scaleOut("three", INSTANCES);
    String split = awaitSpread(d.bootstrap(), three);
    res.note(
        CostStage.STAGE,
        String.format(
            "scale-out: runlane's processor (Redis dedup on) on %d input partitions as %d JVMs of"
                + " one application id (static instance ids; input partitions held: %s) next to"
                + " one JVM on %d partitions of its own, each behind an ingress of its own; the"
                + " runlane and bare pipelines stopped first; same rate, %d s warm-up through each,"
                + " windows as above",
            PARTITIONS, INSTANCES, split, PARTITIONS, warm.toSeconds()));
    String oneThreads = CostStage.scaleOutOneThreads();
    if (oneThreads != null) {
      res.note(
          CostStage.STAGE,
          "scale-out: the one instance runs "
              + oneThreads
              + " stream threads ("
              + CostStage.SCALE_OUT_ONE_THREADS_VARIABLE
              + "), not the three's: an investigation, not the deployed comparison (D104)");
    }
    for (Instances i : List.of(one, three)) {
      Deployment dep = i.deployment();
      measure(load, dep.port(), d.bootstrap(), dep.topics(), rate, Duration.ZERO, warm, webhooks);
    }
    Duration reorder = Services.tunedProcessor().reorderWindow();
    List<Double> oneUs = new ArrayList<>();
    List<Double> threeUs = new ArrayList<>();
    for (int rep = 1; rep <= repetitions; rep++) {
      // Which goes first alternates, as in the stage's other windows.
      List<Instances> order = rep % 2 == 1 ? List.of(one, three) : List.of(three, one);
      for (Instances i : order) {
        double us = window(ctx, d, i, load, rate, settle, window, webhooks, rep, reorder);
        (i == one ? oneUs : threeUs).add(us);
      }
    }
    res.add(row(rate, threeUs, oneUs));
  }

  /**
   * One window of the stage's (CostStage.cpuWindow): the processors' CPU-µs per webhook, summed;
   * NaN if the pipeline did not keep up, or if, for several instances, one held no input partition
   * before it (then the window is still run, for its note).
   */
  private static double window(
      BenchContext ctx,
      CostDeployments d,
      Instances in,
      OpenLoopLoad load,
      double rate,
      Duration settle,
      Duration window,
      Webhooks webhooks,
      int rep,
      Duration reorder)
      throws Exception {
    String problem = null;
    if (!in.instanceIds().isEmpty()) {
      try {
        ctx.results.note(
            CostStage.STAGE, "rep " + rep + ", partitions held: " + awaitSpread(d.bootstrap(), in));
      } catch (IllegalStateException e) {
        problem = e.getMessage();
      }
    }
    Map<String, Double> us =
        CostStage.cpuWindow(
            ctx, d, in.deployment(), load, rate, settle, window, webhooks, rep, reorder);
    if (problem != null) {
      ctx.results.note(
          CostStage.STAGE,
          "rep " + rep + ", " + in.deployment().name() + ": window does not count: " + problem);
      return Double.NaN;
    }
    return processorMicros(us);
  }

  /**
   * The processors' CPU-µs per webhook of one window: the sum over every component named {@code
   * processor} or {@code processor-<x>}; NaN if any is (a window that did not count).
   */
  static double processorMicros(Map<String, Double> us) {
    double sum = 0;
    int n = 0;
    for (Map.Entry<String, Double> e : us.entrySet()) {
      if (e.getKey().equals("processor") || e.getKey().startsWith("processor-")) {
        sum += e.getValue();
        n++;
      }
    }
    return n == 0 ? Double.NaN : sum;
  }

  /** The row: three instances' summed figure against one instance's, with the target. */
  static Row row(double rate, List<Double> three, List<Double> one) {
    Spread t = Spread.of(three);
    Spread o = Spread.of(one);
    Spread ratio = Spread.ofRatios(three, one);
    return Row.figure(
            CostStage.STAGE,
            String.format(
                "processor CPU-us per webhook @ %,.0f/s on %d partitions, %d instances (separate"
                    + " JVMs, summed) vs 1: %d %s, 1 %s, ratio %s",
                rate, PARTITIONS, INSTANCES, INSTANCES, t.value(), o.value(), ratio.ratio()),
            t.median(),
            "us")
        .against("one instance, same partitions and rate", o.median(), ratio.median())
        .withTarget(
            "<= 1.1x one instance (median of the repetitions)",
            ratio.count() > 0 && ratio.median() <= RATIO_TARGET);
  }

  /**
   * Until the group of {@code three} is stable, every instance holds input partitions and answers
   * ready (RUNNING): the split, e.g. {@code bench-cost-so3-a 8, ...}.
   *
   * @throws IllegalStateException when that does not happen within two minutes
   */
  static String awaitSpread(String bootstrap, Instances three) throws Exception {
    long deadline = System.nanoTime() + SPREAD_TIMEOUT.toNanos();
    String webhooks = three.deployment().topics().webhooks();
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      while (true) {
        ConsumerGroupDescription group =
            admin
                .describeConsumerGroups(List.of(three.appId()))
                .describedGroups()
                .get(three.appId())
                .get(30, TimeUnit.SECONDS);
        Map<String, Integer> held =
            perInstance(held(group.members(), webhooks), three.instanceIds());
        Optional<String> problem = spreadProblem(group.groupState() == GroupState.STABLE, held);
        if (problem.isEmpty()
            && three.adminPorts().stream()
                .allMatch(p -> Child.answers200(p, AdminServer.READY_PATH))) {
          return held.toString();
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              problem.orElse("an instance not ready") + " after " + SPREAD_TIMEOUT);
        }
        LockSupport.parkNanos(Duration.ofMillis(250).toNanos());
      }
    }
  }

  /** Input partitions of {@code topic} each member's static instance id holds, summed by id. */
  private static Map<String, Integer> held(Collection<MemberDescription> members, String topic) {
    Map<String, Integer> out = new TreeMap<>();
    for (MemberDescription m : members) {
      String id = m.groupInstanceId().orElse("(dynamic)");
      long n =
          m.assignment().topicPartitions().stream().filter(tp -> tp.topic().equals(topic)).count();
      out.merge(id, (int) n, Integer::sum);
    }
    return out;
  }

  /**
   * The partitions each instance holds, from its members' (a member's id is its instance's id, or
   * that with Streams' thread suffix); an instance with no member holds 0.
   */
  static Map<String, Integer> perInstance(Map<String, Integer> byMember, List<String> ids) {
    Map<String, Integer> out = new TreeMap<>();
    for (String id : ids) {
      int n = 0;
      for (Map.Entry<String, Integer> e : byMember.entrySet()) {
        if (e.getKey().equals(id) || e.getKey().startsWith(id + "-")) {
          n += e.getValue();
        }
      }
      out.put(id, n);
    }
    return out;
  }

  /**
   * Why the window may not start yet, if it may not: the group is rebalancing, or an instance holds
   * no input partition.
   */
  static Optional<String> spreadProblem(boolean stable, Map<String, Integer> perInstance) {
    if (!stable) {
      return Optional.of("group not stable: " + perInstance);
    }
    for (Map.Entry<String, Integer> e : perInstance.entrySet()) {
      if (e.getValue() == 0) {
        return Optional.of(e.getKey() + " holds no input partition: " + perInstance);
      }
    }
    return Optional.empty();
  }
}
