package dev.runlane.local;

import dev.runlane.common.config.Secret;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code runlane up}: the whole stack until Ctrl-C. */
@Command(
    name = "up",
    mixinStandardHelpOptions = true,
    description = "Starts Kafka, Redis, the ingress and the processor in this JVM until Ctrl-C.")
final class UpCommand implements Callable<Integer> {

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Ingress bind address.")
  String host;

  @Option(names = "--port", defaultValue = "8080", description = "Webhook port (0 = free).")
  int port;

  @Option(names = "--admin-port", defaultValue = "9080", description = "Ingress admin port.")
  int adminPort;

  @Option(
      names = "--processor-port",
      defaultValue = "9081",
      description = "Processor port: health, metrics, /runs/{id}.")
  int processorPort;

  @Option(names = "--partitions", defaultValue = "6", description = "Partitions per topic.")
  int partitions;

  @Option(
      names = "--secret",
      defaultValue = "${env:RUNLANE_SECRET}",
      description = "Signing secret (default: $RUNLANE_SECRET, else a new random one).")
  String secret;

  @Option(
      names = "--redis-url",
      description = "Use this Redis (default: $REDIS_URL, else localhost:6379, else bundled).")
  URI redisUrl;

  @Option(
      names = "--redis-cluster",
      description =
          "Run the dedup layer on a 3-primary Redis Cluster of the bundled redis-server"
              + " (redis+cluster://, D82) instead of one Redis.")
  boolean redisCluster;

  @Option(
      names = "--no-sink",
      description = "Leave out PostgreSQL and the sink (saves about 2 s of start-up).")
  boolean noSink;

  @Override
  public Integer call() throws InterruptedException {
    Secret signing = secret == null || secret.isBlank() ? Stack.newSecret() : Secret.of(secret);
    if (redisCluster && redisUrl != null) {
      System.err.println("--redis-cluster starts its own cluster: leave out --redis-url");
      return 2;
    }
    Stack.Settings settings =
        new Stack.Settings(
            host,
            port,
            adminPort,
            processorPort,
            partitions,
            signing,
            redisUrl,
            Duration.ZERO,
            !noSink,
            redisCluster,
            Map.of());
    PrintStream out = System.out;
    out.println("starting the runlane stack (Kafka, Redis, ingress, processor) ...");
    Stack stack = Stack.start(settings); // a cluster it started is stopped with it
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println("\nstopping ...");
                  stack.close();
                  System.out.println("stopped");
                  stopped.countDown();
                },
                "runlane-up-shutdown"));
    printBanner(out, stack);
    stopped.await();
    return 0;
  }

  static void printBanner(PrintStream out, Stack stack) {
    URI processor = stack.processorUri();
    out.println();
    out.println("runlane is up");
    out.println("  webhooks        POST " + stack.webhookUri());
    out.println("  ingress admin   " + stack.ingressAdminUri() + "/health/ready  /metrics");
    out.println("  processor       " + processor + "/runs/{run_id}  /health/ready  /metrics");
    out.println("  kafka           " + stack.bootstrapServers());
    out.println("  redis           " + stack.redisDescription());
    if (stack.sinkTarget() != null) {
      out.println("  sink admin      " + stack.sinkTarget().adminUri() + "/health/ready  /metrics");
      out.println(
          "  postgres        "
              + stack.sinkTarget().jdbcUrl()
              + " (user "
              + stack.sinkTarget().user()
              + "; tables processed_events, runs, sink_offsets)");
    }
    out.println("  signing secret  " + stack.secret().reveal());
    out.println();
    out.println("send a webhook and read the run's state:");
    out.println(
        "  ./runlane send --url "
            + stack.webhookUri()
            + " --secret "
            + stack.secret().reveal()
            + " --run run-1 --type run.started");
    out.println("  curl " + processor + "/runs/run-1");
    out.println();
    // The operator tools read the services' variables; these are the stack's (D87, D88).
    String tools =
        "KAFKA_BOOTSTRAP_SERVERS="
            + stack.bootstrapServers()
            + " REDIS_URL="
            + stack.redisUri()
            + " DEDUP_KEY_PREFIX="
            + stack.processor().config().dedupKeyPrefix()
            + " PROCESSOR_URL="
            + processor;
    out.println("what runlane decided for each delivery, and whether every one is accounted for:");
    out.println("  " + tools + " ./runlane trace --run run-1");
    out.println("  " + tools + " ./runlane audit");
    out.println();
    out.println("Ctrl-C stops everything (the broker's data is deleted).");
    out.flush();
  }
}
