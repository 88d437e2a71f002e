package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;

/**
 * A rolling update of the processor, as an operator does one: two instances (child JVMs, static
 * group instance ids, state dirs of their own) under a live load; each in turn is sent SIGTERM and,
 * once it has exited, a successor is started on the same state dir, instance id and port; the next
 * waits until the successor is ready. Per instance: SIGTERM to the successor's first output of
 * input written after the old JVM exited, the longest pause in output its partitions see, and where
 * the successor's time goes (admin port, ready). Every acked input must end in the events topic
 * once.
 */
public final class RestartStage extends Stage {
  static final String STAGE = "restart";
  static final String APP_ID = "bench-restart";
  static final int INSTANCES = 2;
  static final int RATE = 300;

  /** The target: a deploy pauses each instance's partitions at most this long. */
  static final double TARGET_SECONDS = 5;

  private static final String PREFIX = "rst.";

  public RestartStage() {
    super(
        STAGE,
        Stream.concat(Stream.of(ClassDataArchive.VARIABLE), Services.PROCESSOR_TUNING.stream())
            .toList());
  }

  /** One instance of the deployment: what its successor keeps (state dir, instance id, port). */
  private static final class Instance {
    final String id;
    final Path stateDir;
    final int port;
    ProcessorChild child;

    Instance(int index) throws IOException {
      this.id = "bench-restart-processor-" + index;
      this.stateDir = Files.createTempDirectory("runlane-bench-restart-" + index);
      this.port = ProcessorChild.freePort();
    }
  }

  /** What one instance's restart measured, in seconds after its SIGTERM. */
  record Roll(
      String instance,
      Set<Integer> partitions,
      double exited,
      double portOpen,
      double ready,
      double firstOutput,
      double pause,
      long rebalances) {}

  @Override
  public void run(BenchContext ctx) throws Exception {
    ctx.createTopics(PREFIX + "webhooks", PREFIX + "dlq", PREFIX + "events", PREFIX + "stale");
    LiveOutputs outputs = new LiveOutputs(ctx.bootstrap(), PREFIX + "webhooks", PREFIX + "events");
    List<Instance> instances = new ArrayList<>();
    for (int i = 0; i < INSTANCES; i++) {
      instances.add(new Instance(i));
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();
    Duration settle = Duration.ofSeconds(ctx.quick ? 5 : 10);
    try {
      for (Instance in : instances) {
        in.child = start(ctx, in, "first");
      }
      outputs.startReader();
      for (Instance in : instances) {
        awaitReady(http, in.child, Duration.ofMinutes(2));
      }
      outputs.startLoad(RATE);
      outputs.awaitAny(Duration.ofSeconds(90));
      List<Roll> rolls = new ArrayList<>();
      for (Instance in : instances) {
        LockSupport.parkNanos(settle.toNanos());
        rolls.add(roll(ctx, http, in, outputs));
      }
      LockSupport.parkNanos(settle.toNanos());
      outputs.stopLoad();
      report(ctx.results, rolls, outputs.check(Duration.ofSeconds(60)), outputs);
    } finally {
      outputs.close();
      for (Instance in : instances) {
        if (in.child != null) {
          in.child.stop();
        }
      }
    }
  }

  /** SIGTERM to {@code in}, its successor started once it exited, measured until it is ready. */
  private static Roll roll(BenchContext ctx, HttpClient http, Instance in, LiveOutputs outputs)
      throws Exception {
    Set<Integer> partitions = partitionsOf(ctx.bootstrap(), in.id);
    ctx.results.note(STAGE, in.id + ": SIGTERM at " + Instant.now() + " (for its logs' times)");
    long sigterm = System.nanoTime();
    in.child.process().destroy(); // SIGTERM, as Kubernetes stops a pod
    if (!in.child.process().waitFor(60, TimeUnit.SECONDS)) {
      throw new IllegalStateException(in.id + " did not exit within 60 s of SIGTERM");
    }
    long exited = System.nanoTime();
    in.child = start(ctx, in, "successor");
    long portOpen = -1;
    long ready = -1;
    long first = -1;
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while ((ready < 0 || first < 0) && System.nanoTime() < deadline) {
      long probe = System.nanoTime(); // a busy new JVM can take a while to answer
      int status = in.child.status(http, "/health/ready");
      if (portOpen < 0 && status >= 0) {
        portOpen = probe;
      }
      if (ready < 0 && status == 200) {
        ready = probe;
      }
      if (first < 0) {
        first = outputs.firstAfter(partitions, exited);
      }
      LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
    }
    // The pause: the longest gap between outputs on one of its partitions, from shortly before
    // the SIGTERM until the successor has been processing a while.
    LockSupport.parkNanos(Duration.ofSeconds(2).toNanos());
    double pause = outputs.longestGap(partitions, sigterm - Duration.ofSeconds(1).toNanos());
    return new Roll(
        in.id,
        partitions,
        (exited - sigterm) / 1e9,
        since(sigterm, portOpen),
        since(sigterm, ready),
        since(sigterm, first),
        pause,
        rebalances(in.child.log()));
  }

  private static double since(long start, long at) {
    return at < 0 ? Double.NaN : (at - start) / 1e9;
  }

  /**
   * The input partitions the instance's consumer holds now (its static instance id, with Streams'
   * thread suffix).
   */
  private static Set<Integer> partitionsOf(String bootstrap, String instanceId) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      ConsumerGroupDescription group =
          admin
              .describeConsumerGroups(List.of(APP_ID))
              .describedGroups()
              .get(APP_ID)
              .get(30, TimeUnit.SECONDS);
      Set<Integer> out = new TreeSet<>();
      for (MemberDescription m : group.members()) {
        String id = m.groupInstanceId().orElse("");
        if (id.equals(instanceId) || id.startsWith(instanceId + "-")) {
          m.assignment().topicPartitions().stream()
              .filter(tp -> tp.topic().equals(PREFIX + "webhooks"))
              .map(TopicPartition::partition)
              .forEach(out::add);
        }
      }
      if (out.isEmpty()) {
        throw new IllegalStateException(
            "no input partitions assigned to " + instanceId + " in group " + APP_ID);
      }
      return out;
    }
  }

  /** How often the successor's Streams went to REBALANCING: its log's state changes. */
  private static long rebalances(Path log) throws IOException {
    try (Stream<String> lines = Files.lines(log)) {
      return lines.filter(l -> l.contains("streams state") && l.endsWith("-> REBALANCING")).count();
    }
  }

  private static void awaitReady(HttpClient http, ProcessorChild child, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!child.answers(http, "/health/ready")) {
      if (!child.process().isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "processor on port " + child.port() + " not ready within " + timeout);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
  }

  /**
   * The processor as deployed: the jar's own logback.xml (the services' shape: status off, text
   * appender, INFO), static membership, leaving the group on SIGTERM (deploy/k8s), its state dir
   * kept across the restart.
   */
  private static ProcessorChild start(BenchContext ctx, Instance in, String name)
      throws IOException {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", ctx.bootstrap());
    env.put("REDIS_URL", ctx.redis().uri().toString());
    env.put("PROCESSOR_APPLICATION_ID", APP_ID);
    env.put("PROCESSOR_STATE_DIR", in.stateDir.toString());
    env.put("PROCESSOR_GROUP_INSTANCE_ID", in.id);
    // As deploy/k8s runs it: a SIGTERMed processor leaves the group (D102).
    env.put("PROCESSOR_SHUTDOWN_LEAVES_GROUP", "true");
    env.put("TOPIC_WEBHOOKS", PREFIX + "webhooks");
    env.put("TOPIC_DLQ", PREFIX + "dlq");
    env.put("TOPIC_EVENTS", PREFIX + "events");
    env.put("TOPIC_STALE", PREFIX + "stale");
    env.put("TOPIC_RUNS", PREFIX + "runs");
    env.put("TOPIC_DECISIONS", PREFIX + "decisions");
    env.put("TOPIC_PARTITIONS", Integer.toString(BenchContext.PARTITIONS));
    env.put("TOPIC_REPLICATION_FACTOR", "1");
    env.put("DEDUP_KEY_PREFIX", "bench:restart:");
    BenchContext.passThrough(env, Services.PROCESSOR_TUNING);
    return ProcessorChild.start(ctx, STAGE, in.id + "-" + name, in.port, List.of("-Xmx512m"), env);
  }

  private static void report(Results res, List<Roll> rolls, long[] lostTwice, LiveOutputs out) {
    for (Roll r : rolls) {
      String who = r.instance() + ", partitions " + r.partitions();
      res.add(
          Row.figure(
                  STAGE, "SIGTERM -> successor's first output (" + who + ")", r.firstOutput(), "s")
              .withTarget("<= 5 s", r.firstOutput() <= TARGET_SECONDS));
      res.add(
          Row.figure(STAGE, "longest output pause its partitions see (" + who + ")", r.pause(), "s")
              .withTarget("<= 5 s", r.pause() <= TARGET_SECONDS));
      res.note(
          STAGE,
          String.format(
              "%s: old JVM exited %.1f s after SIGTERM; successor's admin port open at %.1f s,"
                  + " /health/ready at %.1f s, first output at %.1f s; its Streams rebalanced %d"
                  + " time(s)",
              r.instance(), r.exited(), r.portOpen(), r.ready(), r.firstOutput(), r.rebalances()));
    }
    res.add(
        Row.figure(
                STAGE,
                "acked input records lost / applied twice",
                lostTwice[0] + lostTwice[1],
                "records")
            .withTarget("0", lostTwice[0] == 0 && lostTwice[1] == 0));
    res.note(
        STAGE,
        String.format(
            "%,d records acked (acks=all) at %d/s (%,d sends failed); %,d lost, %,d applied twice;"
                + " %d processors = child JVMs (ProcessorMain, exactly_once_v2, static group"
                + " instance ids, the jar's logback.xml), each in turn SIGTERMed and, once exited,"
                + " a successor started on its state dir, instance id and port; the next rolled"
                + " once the successor was ready",
            out.acked(), RATE, out.notAcked(), lostTwice[0], lostTwice[1], INSTANCES));
  }
}
