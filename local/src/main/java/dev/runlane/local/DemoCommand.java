package dev.runlane.local;

import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.PipelineVerifier;
import dev.runlane.local.verify.Report;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code runlane demo}: the stack, driven by the Sume simulator, then the verification report. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Starts the stack on free ports, runs the Sume simulator against it (duplicates,",
      "concurrent duplicates, reordered events, slow acks, retries) and verifies the result.",
      "Exit code 0 only if every check passed."
    })
final class DemoCommand implements Callable<Integer> {

  @Option(
      names = "--duration",
      defaultValue = "PT60S",
      description = "How long new events are generated (ISO-8601, e.g. PT60S).")
  Duration duration;

  @Option(names = "--rate", defaultValue = "50", description = "New events per second.")
  double rate;

  @Option(
      names = "--time-scale",
      defaultValue = "60",
      description = "How much faster than real time Sume's retry schedule runs (60: 1 h -> 1 min).")
  double timeScale;

  @Option(names = "--seed", description = "Workload seed (default: random).")
  Long seed;

  @Option(
      names = "--drain-timeout",
      defaultValue = "PT3M",
      description = "How long to wait for retries and late duplicates after generation ends.")
  Duration drainTimeout;

  @Option(
      names = "--reorder-window",
      defaultValue = "PT0S",
      description = {
        "The processor's PROCESSOR_REORDER_WINDOW (ISO-8601, e.g. PT1S; at most PT5S): events",
        "arriving within it are applied in order, and the report checks that (D46)."
      })
  Duration reorderWindow;

  @Option(
      names = "--redis-cluster",
      description =
          "Run the dedup layer on a 3-primary Redis Cluster of the bundled redis-server (D82).")
  boolean redisCluster;

  @Option(
      names = "--no-sink",
      description = "Leave out PostgreSQL and the sink, and the report's database checks.")
  boolean noSink;

  @Override
  public Integer call() throws InterruptedException {
    PrintStream out = System.out;
    long workloadSeed = seed != null ? seed : System.nanoTime();
    out.println("starting the runlane stack on free ports ...");
    Stack.Settings settings =
        Stack.Settings.freePorts(Stack.newSecret())
            .withReorderWindow(reorderWindow)
            .withSink(!noSink);
    try (Stack stack = Stack.start(redisCluster ? settings.withRedisCluster() : settings)) {
      out.println(
          "stack up: webhooks "
              + stack.webhookUri()
              + ", processor "
              + stack.processorUri()
              + ", kafka "
              + stack.bootstrapServers()
              + ", redis "
              + stack.redisDescription());
      out.printf(
          "simulating Sume for %ds at %.0f events/s (retry schedule x%.0f faster, seed %d, reorder"
              + " window %d ms)%n",
          duration.toSeconds(), rate, timeScale, workloadSeed, reorderWindow.toMillis());
      Report report;
      try (SumeSimulator simulator =
              new SumeSimulator(
                  SumeSimulator.Settings.of(
                      stack.webhookUri(), stack.secret(), timeScale, workloadSeed));
          Progress progress = new Progress(simulator.ledger(), stack, out, Progress.isTerminal())) {
        simulator.start(rate, Long.MAX_VALUE, duration);
        long deadline = System.nanoTime() + duration.plus(drainTimeout).toNanos();
        while (!simulator.awaitIdle(progress.interval())) {
          progress.update();
          if (System.nanoTime() > deadline) {
            out.println();
            out.println("simulator still busy after the drain timeout; verifying what was acked");
            break;
          }
        }
        progress.finish();
        out.println("waiting for the pipeline to settle, then verifying ...");
        report =
            new PipelineVerifier(stack.verifierTarget())
                .verify(simulator.ledger(), Duration.ofSeconds(60), reorderWindow);
      }
      out.println(report.summary());
      out.println("stopping the stack ...");
      return report.passed() ? 0 : 1;
    }
  }
}
