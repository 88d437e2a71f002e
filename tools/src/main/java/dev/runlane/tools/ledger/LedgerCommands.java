package dev.runlane.tools.ledger;

import dev.runlane.common.config.EnvReader;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.BadUsage;
import dev.runlane.tools.ExitCodes;
import dev.runlane.tools.ToolsConfig;
import dev.runlane.tools.generation.Pipeline;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code runlane trace} and {@code runlane audit}, on the services' environment. */
public final class LedgerCommands {
  private LedgerCommands() {}

  /** A command that runs on the environment and prints where it is told. */
  public interface EnvCommand {
    void use(Map<String, String> env, PrintStream out);
  }

  static DecisionLogSettings logSettings(Map<String, String> env) {
    EnvReader r = new EnvReader(env);
    DecisionLogSettings s = DecisionLogSettings.fromEnv(r, TopicNames.fromEnv(r));
    r.throwIfInvalid();
    return s;
  }

  /**
   * The sink's settings when its database is configured ({@code SINK_DATABASE_URL} set), else null:
   * {@code trace} shows the rows and {@code audit} checks them (D94).
   *
   * @throws dev.runlane.common.config.ConfigException naming every bad variable of the sink's
   */
  static SinkConfig sinkSettings(Map<String, String> env) {
    return env.get(SinkConfig.ENV_DATABASE_URL) == null ? null : SinkConfig.fromEnv(env);
  }

  @Command(
      name = "trace",
      mixinStandardHelpOptions = true,
      description = {
        "What happened to a webhook: each delivery received, each decision and the layer that"
            + " made it, the records it wrote, what is received and not decided yet, the run's"
            + " state now (/runs, PROCESSOR_URL), the Redis marker now (REDIS_URL,"
            + " DEDUP_KEY_PREFIX) and, with SINK_DATABASE_URL set, each request id's row in the"
            + " sink's processed_events and the sink's position on the run's partition, from the"
            + " decision log (TOPIC_DECISIONS).",
        "With --run it reads the run's one partition; with only --request-id it searches every"
            + " partition and says how far it got."
      },
      footer = ExitCodes.HELP)
  public static final class Trace implements Callable<Integer>, EnvCommand {
    @Option(names = "--run", description = "The run id: reads its partition only.")
    String run;

    @Option(names = "--request-id", description = "The request id (the webhook's id).")
    String requestId;

    @Option(names = "--since", description = "Only decisions logged since this ISO-8601 instant.")
    Instant since;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    private Map<String, String> env;
    private PrintStream out;

    @Override
    public void use(Map<String, String> env, PrintStream out) {
      this.env = env;
      this.out = out;
    }

    @Override
    public Integer call() {
      DecisionLogSettings log = logSettings(env);
      SinkConfig sink = sinkSettings(env);
      URI processor =
          URI.create(
              env.getOrDefault(
                  "PROCESSOR_URL",
                  "http://localhost:" + env.getOrDefault("PROCESSOR_PORT", "9081")));
      try (Pipeline pipeline = new Pipeline(ToolsConfig.fromEnv(env))) {
        // With --json the progress goes to stderr-like silence: the output is one object.
        PrintStream progress = json ? new PrintStream(PrintStream.nullOutputStream()) : out;
        DecisionTrace.Result r =
            new DecisionTrace(pipeline, log, new RedisMarker(env), sink, processor, progress)
                .trace(run, requestId, since);
        if (json) {
          TraceOutput.json(r, out);
        } else {
          TraceOutput.text(r, out);
        }
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "audit",
      mixinStandardHelpOptions = true,
      description = {
        "The ledger of the running generation: per input partition, the input records up to the"
            + " committed offset against the decision log (one decision each), and each decision's"
            + " record in the events, stale and DLQ topics. Reads those topics whole; with --watch,"
            + " reads on from where the last audit stopped, and whole every --full-every audits.",
        "With SINK_DATABASE_URL set (the sink's settings), every applied event below the sink's"
            + " position (sink_offsets) has its row in processed_events; past it, it is counted"
            + " as not yet in the sink.",
        "Exits 5 naming the first unaccounted records when they do not balance."
      },
      footer = ExitCodes.HELP)
  public static final class Audit implements Callable<Integer>, EnvCommand {
    @Option(
        names = "--since",
        description =
            "Only input records received since this ISO-8601 instant (e.g. past the decision"
                + " log's retention, or since it was turned on).")
    Instant since;

    @Option(
        names = "--watch",
        description =
            "Audit every --interval-seconds until stopped, exporting"
                + " runlane_audit_unaccounted_records on --metrics-port's /metrics.")
    boolean watch;

    @Option(
        names = "--interval-seconds",
        defaultValue = "300",
        description = "With --watch: seconds between audits (default: ${DEFAULT-VALUE}).")
    long intervalSeconds;

    @Option(
        names = "--metrics-port",
        defaultValue = "9096",
        description = "With --watch: the port of /metrics and /health (default: ${DEFAULT-VALUE}).")
    int metricsPort;

    @Option(
        names = "--full-every",
        defaultValue = "12",
        description =
            "With --watch: every this many audits reads the topics whole again, so that a record"
                + " deleted from an output after it was audited is found (default:"
                + " ${DEFAULT-VALUE}).")
    int fullEvery;

    private Map<String, String> env;
    private PrintStream out;

    @Override
    public void use(Map<String, String> env, PrintStream out) {
      this.env = env;
      this.out = out;
    }

    @Override
    public Integer call() throws InterruptedException {
      DecisionLogSettings log = logSettings(env);
      SinkConfig sink = sinkSettings(env);
      try (Pipeline pipeline = new Pipeline(ToolsConfig.fromEnv(env))) {
        if (watch) {
          return watch(pipeline, log, sink);
        }
        Ledger.Result r = new Ledger(pipeline, log, sink).audit(since);
        AuditOutput.text(r, log.topic(), out);
        return r.balanced() ? ExitCodes.OK : ExitCodes.UNACCOUNTED;
      }
    }

    private int watch(Pipeline pipeline, DecisionLogSettings log, SinkConfig sink)
        throws InterruptedException {
      if (since != null) {
        throw new BadUsage("--since and --watch: a continuous audit checks what retention keeps");
      }
      if (fullEvery < 1) {
        throw new BadUsage("--full-every must be at least 1 (1: every audit reads whole)");
      }
      CountDownLatch stop = new CountDownLatch(1);
      PrometheusMeterRegistry registry = Metrics.newRegistry("audit");
      AuditWatch w = new AuditWatch(pipeline, log, sink, fullEvery, registry, out);
      try (AdminServer server =
          AdminServer.start("0.0.0.0", metricsPort, registry, w::ranOnce, Map.of())) {
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "audit-stop"));
        out.printf("auditing every %d s; /metrics on port %d%n", intervalSeconds, server.port());
        w.watch(Duration.ofSeconds(intervalSeconds), stop);
      } finally {
        registry.close();
      }
      return ExitCodes.OK;
    }
  }
}
