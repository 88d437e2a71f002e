package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.Child;
import dev.runlane.bench.load.Webhooks;
import dev.runlane.bench.probe.ProcessCpu;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.FreePorts;
import dev.runlane.ingress.IngressMain;
import dev.runlane.processor.ProcessorMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import redis.clients.jedis.Jedis;

/**
 * The cost stage's processes (D92): the broker alone in a JVM, runlane's ingress and processor each
 * in one, the bare pipeline's ingress and Streams application each in one, and a {@code
 * redis-server}; each a {@link Component} whose CPU time a window reads.
 */
final class CostDeployments implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofMinutes(2);

  /**
   * Stream threads of runlane's processor and of the bare Streams application alike, unless the run
   * sets {@code PROCESSOR_THREADS}: the deployed processor's (deploy/k8s, one per CPU), as a single
   * thread left runlane's capacity bound by its waits on Redis and commits (D103).
   */
  static final String DEPLOYED_THREADS = "2";

  /** One process's CPU clock, by the name its rows use. */
  record Component(String name, long pid, LongSupplier cpuMillis) {}

  /**
   * One pipeline: where its webhooks are sent, where the read_committed reader finds its output,
   * and the processes whose CPU time is its cost.
   */
  record Deployment(String name, int port, TopicNames topics, List<Component> components) {}

  private final List<Child> children = new ArrayList<>();

  /** The services each pipeline runs, by its name: what {@link #stop} ends. */
  private final Map<String, List<Child>> services = new HashMap<>();

  /**
   * Stops the children if the bench's JVM ends before the stage does (Ctrl-C, a kill): they would
   * otherwise run on, a broker and four services loading the machine.
   */
  private final Thread onExit = new Thread(this::stopChildren, "cost-children-stop");

  private final List<String> logs = new ArrayList<>();
  private EmbeddedRedis redis;
  private String bootstrap;
  private Component broker;
  private Component redisComponent;
  private String bareStreamsSettings;

  /** Starts the broker and Redis; the pipelines come with {@link #runlane} and {@link #bare}. */
  static CostDeployments start() throws Exception {
    CostDeployments d = new CostDeployments();
    Runtime.getRuntime().addShutdownHook(d.onExit);
    try {
      Path ready = readyFile("broker");
      Child kafka = d.child("broker", List.of("broker", ready.toString()), Map.of());
      kafka.awaitReady(() -> Files.exists(ready), START_TIMEOUT);
      d.bootstrap = Files.readString(ready).trim();
      d.broker = new Component("broker", kafka.pid(), kafka::cpuMillis);
      d.redis = EmbeddedRedis.startOwned();
      long redisPid;
      try (Jedis j = new Jedis(d.redis.host(), d.redis.port())) {
        redisPid = processId(j.info("server"));
      }
      d.redisComponent = new Component("Redis", redisPid, () -> ProcessCpu.millis(redisPid));
      return d;
    } catch (Exception | Error e) {
      d.close();
      throw e;
    }
  }

  String bootstrap() {
    return bootstrap;
  }

  Component broker() {
    return broker;
  }

  Component redis() {
    return redisComponent;
  }

  /** Where each child's output went, for the notes. */
  List<String> logs() {
    return logs;
  }

  /** The bare Streams application's guarantee, threads and commit interval, as it reported them. */
  String bareStreamsSettings() {
    return bareStreamsSettings;
  }

  /** runlane's ingress and processor, each in a JVM of its own, with Redis dedup on. */
  Deployment runlane() throws Exception {
    TopicNames topics =
        new TopicNames("cost.webhooks", "cost.dlq", "cost.events", "cost.stale", "cost.runs");
    createTopics(topics.webhooks(), topics.dlq(), topics.events(), topics.stale());
    Map<String, String> env = ingressEnv(topics, BenchContext.PARTITIONS);
    int port = Integer.parseInt(env.get("INGRESS_PORT"));
    Child ingress = runlaneIngress("runlane", "ingress", env);
    Map<String, String> penv = Services.processorEnv(bootstrap, redis, "bench-cost", topics, true);
    penv.putIfAbsent("PROCESSOR_THREADS", DEPLOYED_THREADS);
    int processorPort = FreePorts.next();
    penv.put("PROCESSOR_PORT", Integer.toString(processorPort));
    Child processor = child("runlane", "processor", ProcessorMain.class, List.of(), penv);
    processor.awaitReady(
        () -> Child.answers200(processorPort, AdminServer.READY_PATH), START_TIMEOUT);
    return new Deployment(
        "runlane",
        port,
        topics,
        List.of(
            new Component("ingress", ingress.pid(), ingress::cpuMillis),
            new Component("processor", processor.pid(), processor::cpuMillis),
            broker,
            redisComponent));
  }

  /**
   * The bare pipeline: the bare ingress and the copying Streams application, each in a JVM of its
   * own, on the same broker, with the same settings as runlane's (CostChild).
   */
  Deployment bare() throws Exception {
    TopicNames topics =
        new TopicNames("bare.webhooks", "bare.dlq", "bare.out", "bare.stale", "bare.runs");
    createTopics(topics.webhooks(), topics.events(), topics.stale());
    Map<String, String> env = ingressEnv(topics, BenchContext.PARTITIONS);
    env.put(CostChild.BARE_INPUT, topics.webhooks());
    int port = Integer.parseInt(env.get("INGRESS_PORT"));
    Path ingressReady = readyFile("bare-ingress");
    Child ingress =
        child("bare", "bare-ingress", List.of("bare-ingress", ingressReady.toString()), env);
    ingress.awaitReady(() -> Files.exists(ingressReady), START_TIMEOUT);
    Map<String, String> senv =
        Services.processorEnv(bootstrap, redis, "bench-cost-bare", topics, false);
    senv.putIfAbsent("PROCESSOR_THREADS", DEPLOYED_THREADS);
    senv.put("PROCESSOR_PORT", Integer.toString(FreePorts.next()));
    senv.put(CostChild.BARE_INPUT, topics.webhooks());
    senv.put(CostChild.BARE_OUTPUT, topics.events());
    Path streamsReady = readyFile("bare-streams");
    Child streams =
        child("bare", "bare-streams", List.of("bare-streams", streamsReady.toString()), senv);
    streams.awaitReady(() -> Files.exists(streamsReady), START_TIMEOUT);
    bareStreamsSettings = Files.readString(streamsReady).trim();
    return new Deployment(
        "bare",
        port,
        topics,
        List.of(
            new Component("ingress", ingress.pid(), ingress::cpuMillis),
            new Component("processor", streams.pid(), streams::cpuMillis),
            broker));
  }

  /**
   * runlane's processor on {@link ScaleOutCost#PARTITIONS} input partitions as {@code instances}
   * JVMs of one application id, each a component of its own ({@code processor}, or {@code
   * processor-a}, {@code -b}, ... with static instance ids {@code <appId>-a}, ...), behind an
   * ingress of its own (counted in the note, not in the scale-out row); each answers ready
   * (RUNNING) before this returns. Whether each holds partitions is {@link ScaleOutCost}'s check.
   */
  ScaleOutCost.Instances scaleOut(String name, int instances) throws Exception {
    String prefix = "so" + instances;
    TopicNames topics =
        new TopicNames(
            prefix + ".webhooks",
            prefix + ".dlq",
            prefix + ".events",
            prefix + ".stale",
            prefix + ".runs");
    int partitions = ScaleOutCost.PARTITIONS;
    createTopics(partitions, topics.webhooks(), topics.dlq(), topics.events(), topics.stale());
    Map<String, String> env = ingressEnv(topics, partitions);
    int port = Integer.parseInt(env.get("INGRESS_PORT"));
    Child ingress = runlaneIngress(name, name + "-ingress", env);
    String appId = "bench-cost-" + prefix;
    List<Child> processors = new ArrayList<>();
    List<Integer> ports = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < instances; i++) {
      Map<String, String> penv = Services.processorEnv(bootstrap, redis, appId, topics, true);
      penv.put("TOPIC_PARTITIONS", Integer.toString(partitions));
      penv.putIfAbsent("PROCESSOR_THREADS", DEPLOYED_THREADS);
      String oneThreads = CostStage.scaleOutOneThreads();
      if (instances == 1 && oneThreads != null) {
        penv.put("PROCESSOR_THREADS", oneThreads); // an investigation's (D104)
      }
      int adminPort = FreePorts.next();
      penv.put("PROCESSOR_PORT", Integer.toString(adminPort));
      String suffix = instances == 1 ? "" : "-" + (char) ('a' + i);
      if (instances > 1) {
        // Static ids, so that the group's assignment names each JVM (the restart stage's way).
        penv.put("PROCESSOR_GROUP_INSTANCE_ID", appId + suffix);
        ids.add(appId + suffix);
      }
      ports.add(adminPort);
      processors.add(
          child(name, name + "-processor" + suffix, ProcessorMain.class, List.of(), penv));
    }
    // Started together, then awaited: one rebalance settles them all, not one per instance.
    for (int i = 0; i < instances; i++) {
      int adminPort = ports.get(i);
      processors
          .get(i)
          .awaitReady(() -> Child.answers200(adminPort, AdminServer.READY_PATH), START_TIMEOUT);
    }
    List<Component> components = new ArrayList<>();
    components.add(new Component("ingress", ingress.pid(), ingress::cpuMillis));
    for (int i = 0; i < instances; i++) {
      Child p = processors.get(i);
      String suffix = instances == 1 ? "" : "-" + (char) ('a' + i);
      components.add(new Component("processor" + suffix, p.pid(), p::cpuMillis));
    }
    components.add(broker);
    components.add(redisComponent);
    return new ScaleOutCost.Instances(
        new Deployment(name, port, topics, components), appId, ids, ports);
  }

  /**
   * Stops a pipeline's services (not the broker or Redis): the scale-out part runs without the idle
   * pipelines' polls and commits beside it.
   */
  void stop(String deployment) {
    for (Child c : services.getOrDefault(deployment, List.of())) {
      c.close();
      children.remove(c);
    }
    services.remove(deployment);
  }

  private Child runlaneIngress(String deployment, String name, Map<String, String> env)
      throws Exception {
    int adminPort = Integer.parseInt(env.get("INGRESS_ADMIN_PORT"));
    Child ingress = child(deployment, name, IngressMain.class, List.of(), env);
    ingress.awaitReady(() -> Child.answers200(adminPort, AdminServer.READY_PATH), START_TIMEOUT);
    return ingress;
  }

  /** The ingress's environment as the e2e stage gives it, on fixed ports. */
  private Map<String, String> ingressEnv(TopicNames topics, int partitions) {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("SUME_SIGNING_SECRETS", Webhooks.SECRET.reveal());
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("INGRESS_PORT", Integer.toString(FreePorts.next()));
    env.put("INGRESS_ADMIN_PORT", Integer.toString(FreePorts.next()));
    env.put("TOPIC_WEBHOOKS", topics.webhooks());
    env.put("TOPIC_DLQ", topics.dlq());
    env.put("TOPIC_EVENTS", topics.events());
    env.put("TOPIC_STALE", topics.stale());
    env.put("TOPIC_PARTITIONS", Integer.toString(partitions));
    env.put("TOPIC_REPLICATION_FACTOR", "1");
    BenchContext.passThrough(env, Services.INGRESS_TUNING);
    return env;
  }

  private Child child(String name, List<String> args, Map<String, String> env) throws Exception {
    return child(name, CostChild.class, args, env);
  }

  private Child child(String deployment, String name, List<String> args, Map<String, String> env)
      throws Exception {
    Child c = child(name, CostChild.class, args, env);
    services.computeIfAbsent(deployment, k -> new ArrayList<>()).add(c);
    return c;
  }

  private Child child(
      String deployment, String name, Class<?> main, List<String> args, Map<String, String> env)
      throws Exception {
    Child c = child(name, main, args, env);
    services.computeIfAbsent(deployment, k -> new ArrayList<>()).add(c);
    return c;
  }

  private Child child(String name, Class<?> main, List<String> args, Map<String, String> env)
      throws Exception {
    Child c = Child.start(name, main, args, env);
    children.add(c);
    logs.add(name + " (pid " + c.pid() + "): " + c.log());
    return c;
  }

  private void createTopics(String... names) {
    createTopics(BenchContext.PARTITIONS, names);
  }

  private void createTopics(int partitions, String... names) {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      TopicEnsurer.ensure(
          admin,
          Arrays.stream(names)
              .map(n -> TopicEnsurer.plain(n, new TopicSettings(partitions, (short) 1)))
              .toList(),
          Duration.ofSeconds(30));
    }
  }

  private static Path readyFile(String name) throws Exception {
    Path dir = Files.createTempDirectory("runlane-bench-cost-" + name);
    return dir.resolve("ready");
  }

  /** The {@code process_id} of Redis's {@code INFO server}. */
  static long processId(String info) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("process_id:")) {
        return Long.parseLong(line.substring("process_id:".length()).trim());
      }
    }
    throw new IllegalStateException("no process_id in INFO server");
  }

  /** The services first, the broker (the first child) last, then Redis. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(onExit);
    } catch (IllegalStateException e) {
      // the JVM is ending: the hook runs the same stop
    }
    stopChildren();
  }

  private synchronized void stopChildren() {
    for (int i = children.size() - 1; i >= 0; i--) {
      children.get(i).close();
    }
    children.clear();
    if (redis != null) {
      redis.close();
      redis = null;
    }
  }
}
