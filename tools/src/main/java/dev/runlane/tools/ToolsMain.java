package dev.runlane.tools;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.dlq.DlqCommands;
import dev.runlane.tools.generation.AbortProcedure;
import dev.runlane.tools.generation.Pipeline;
import dev.runlane.tools.generation.ReplayProcedure;
import dev.runlane.tools.generation.StatusReport;
import dev.runlane.tools.kafka.Cluster;
import dev.runlane.tools.ledger.LedgerCommands;
import dev.runlane.tools.sink.SinkCommands;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code runlane status | replay rebuild | replay reprocess --from T | replay abort | partitions
 * grow --to N | partitions grow --abort}: operator commands, configured by the services' own
 * environment variables.
 */
@Command(
    name = "runlane-tools",
    mixinStandardHelpOptions = true,
    version = "runlane tools 0.1.0",
    description = {
      "Operator commands for a runlane pipeline. Settings come from the services' environment:"
          + " KAFKA_BOOTSTRAP_SERVERS, PROCESSOR_APPLICATION_ID, TOPIC_WEBHOOKS (the pipeline),"
          + " TOPIC_CONTROL, TOPIC_REPLICATION_FACTOR."
    },
    footer = ExitCodes.HELP,
    subcommands = {
      ToolsMain.Status.class,
      ToolsMain.ReplayCommand.class,
      PartitionsCommands.PartitionsCommand.class,
      ToolsMain.DlqCommand.class,
      ToolsMain.SinkCommand.class,
      LedgerCommands.Trace.class,
      LedgerCommands.Audit.class
    })
public final class ToolsMain implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(System.getenv(), System.out, System.err, args));
  }

  /** Runs one command line against {@code env}; returns the exit code. */
  public static int run(Map<String, String> env, PrintStream out, PrintStream err, String... args) {
    CommandLine cli = new CommandLine(new ToolsMain());
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setExecutionExceptionHandler(
        (e, commandLine, parsed) -> {
          if (e instanceof Refused) {
            err.println("refused: " + e.getMessage());
            return ExitCodes.REFUSED;
          }
          if (e instanceof TimedOut) {
            err.println("timed out: " + e.getMessage());
            return ExitCodes.TIMED_OUT;
          }
          if (e instanceof BadUsage) {
            err.println("bad usage: " + e.getMessage());
            return ExitCodes.USAGE;
          }
          if (e instanceof ConfigException) {
            err.println("bad settings: " + e.getMessage());
            return ExitCodes.USAGE;
          }
          String settings = KafkaClientSettings.explain(e);
          err.println("failed: " + (settings != null ? settings : e.toString()));
          return ExitCodes.ERROR;
        });
    Context context = new Context(env, out);
    for (CommandLine sub : cli.getSubcommands().values()) {
      inject(sub, context);
    }
    return cli.execute(args);
  }

  private static void inject(CommandLine command, Context context) {
    if (command.getCommand() instanceof Base b) {
      b.context = context;
    } else if (command.getCommand() instanceof LedgerCommands.EnvCommand c) {
      c.use(context.env(), context.out());
    }
    command.getSubcommands().values().forEach(s -> inject(s, context));
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** What every command runs with: the environment and where it prints. */
  record Context(Map<String, String> env, PrintStream out) {
    Pipeline pipeline() {
      return new Pipeline(ToolsConfig.fromEnv(env));
    }

    Cluster cluster() {
      return new Cluster(ToolsConfig.fromEnv(env).clientSettings());
    }
  }

  abstract static class Base {
    Context context;
  }

  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = "Shows the pipeline's generation, what the processors run, and their lag.",
      footer = ExitCodes.HELP)
  static final class Status extends Base implements Callable<Integer> {
    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        StatusReport.print(pipeline, context.out());
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "replay",
      mixinStandardHelpOptions = true,
      description = "Re-derive run state from the input without doubling what consumers have.",
      footer = ExitCodes.HELP,
      subcommands = {Rebuild.class, Reprocess.class, ReplayAbort.class})
  static final class ReplayCommand extends Base implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }
  }

  abstract static class ReplayBase extends Base {
    @Option(names = "--dry-run", description = "Check and print the plan; change nothing.")
    boolean dryRun;

    @Option(
        names = "--timeout-seconds",
        defaultValue = "600",
        description = "How long each wait may take (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(
        names = "--no-wait",
        description = "Return once the new generation is active, before it has re-derived.")
    boolean noWait;

    int replay(Instant from) {
      try (Pipeline pipeline = context.pipeline()) {
        new ReplayProcedure(pipeline, new Steps(context.out()), Clock.systemUTC())
            .run(
                new ReplayProcedure.Options(
                    from, dryRun, Duration.ofSeconds(timeoutSeconds), !noWait));
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "rebuild",
      mixinStandardHelpOptions = true,
      description = {
        "Rebuilds every run's state from the input in a new generation. Nothing already in the"
            + " events topic is emitted again; events never decided are decided as usual.",
        "The processors stop their Streams while the tool reads where they stopped, then start"
            + " the new generation (processors that do not follow the control topic must be"
            + " stopped by hand). Needs the input retained since the generation began."
      },
      footer = ExitCodes.HELP)
  static final class Rebuild extends ReplayBase implements Callable<Integer> {
    @Override
    public Integer call() {
      return replay(null);
    }
  }

  @Command(
      name = "reprocess",
      mixinStandardHelpOptions = true,
      description = {
        "Rebuilds every run's state as of --from in a new generation, then decides the events"
            + " received since --from again and emits them once more, each with the header"
            + " runlane.replay=<replay id>, for consumers that deduplicate by request_id."
      },
      footer = ExitCodes.HELP)
  static final class Reprocess extends ReplayBase implements Callable<Integer> {
    @Option(
        names = "--from",
        required = true,
        description = "An ISO-8601 instant, e.g. 2026-12-01T10:00:00Z (the ingress receive time).")
    Instant from;

    @Override
    public Integer call() {
      return replay(from);
    }
  }

  @Command(
      name = "abort",
      mixinStandardHelpOptions = true,
      description = {
        "Cancels a rebuild or reprocess that is still being prepared (one that timed out, died, or"
            + " whose resume is refused) and makes the generation it stopped active again: its"
            + " processors go on from where they stopped. Refuses, saying why, where that would"
            + " break a guarantee."
      },
      footer = ExitCodes.HELP)
  static final class ReplayAbort extends Base implements Callable<Integer> {
    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        new AbortProcedure(pipeline, new Steps(context.out()))
            .run(new AbortProcedure.Options(false, Duration.ZERO, Duration.ZERO));
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "dlq",
      mixinStandardHelpOptions = true,
      description = "The dead-letter topic (TOPIC_DLQ): list by reason, show one, re-drive.",
      footer = ExitCodes.HELP,
      subcommands = {DlqList.class, DlqShow.class, DlqRedrive.class})
  static final class DlqCommand extends Base implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Counts the DLQ's records by dlq.reason, with their time span and an example.",
      footer = ExitCodes.HELP)
  static final class DlqList extends Base implements Callable<Integer> {
    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        new DlqCommands(pipeline, context.out()).list();
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Shows one record: headers (dlq.reason, dlq.detail, ...) and body.",
      footer = ExitCodes.HELP)
  static final class DlqShow extends Base implements Callable<Integer> {
    @CommandLine.Parameters(description = "<topic>/<partition>/<offset>, as `dlq list` prints")
    String at;

    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        new DlqCommands(pipeline, context.out()).show(at);
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "redrive",
      mixinStandardHelpOptions = true,
      description = {
        "Writes chosen DLQ records back into the input the ingress writes now, keyed by run id,"
            + " with their headers and dlq.redriven_from. They go through the same dedup and order"
            + " rules: an event applied since is a duplicate, never applied twice. A body that still"
            + " cannot be decoded is skipped and counted; a too_large record is re-driven from the"
            + " input record its dlq.source names."
      },
      footer = ExitCodes.HELP)
  static final class DlqRedrive extends Base implements Callable<Integer> {
    @Option(names = "--reason", description = "Every record with this dlq.reason.")
    String reason;

    @Option(names = "--at", description = "One record, <topic>/<partition>/<offset> (repeatable).")
    List<String> at = new ArrayList<>();

    @Option(
        names = "--rate",
        defaultValue = "100",
        description = "At most this many records per second (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--dry-run", description = "Check what would be re-driven; write nothing.")
    boolean dryRun;

    @Option(
        names = "--force",
        description =
            "Re-drive request_id_reused records too: once the first run's done marker expired,"
                + " each is applied to its own run, a second run for its request id.")
    boolean force;

    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        new DlqCommands(pipeline, context.out()).redrive(reason, at, rate, dryRun, force);
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "sink",
      mixinStandardHelpOptions = true,
      description = {
        "The sink's database (SINK_DATABASE_URL, SINK_DATABASE_USER, SINK_DATABASE_PASSWORD,"
            + " SINK_GROUP_ID, TOPIC_EVENTS): the records it set aside, a retention gap accepted."
      },
      footer = ExitCodes.HELP,
      subcommands = {SinkRejected.class, SinkAcceptGap.class})
  static final class SinkCommand extends Base implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }
  }

  @Command(
      name = "rejected",
      mixinStandardHelpOptions = true,
      description = {
        "Lists the records the sink set aside in sink_rejected instead of storing them, newest"
            + " first: PostgreSQL refused the row (with its SQLSTATE), or the record is no event."
            + " The exact record (key, value, headers) is in the table."
      },
      footer = ExitCodes.HELP)
  static final class SinkRejected extends Base implements Callable<Integer> {
    @Option(
        names = "--limit",
        defaultValue = "50",
        description = "At most this many rows (default: ${DEFAULT-VALUE}).")
    int limit;

    @Override
    public Integer call() throws SQLException {
      try (Cluster cluster = context.cluster()) {
        new SinkCommands(SinkConfig.fromEnv(context.env()), cluster, context.out()).rejected(limit);
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "accept-gap",
      mixinStandardHelpOptions = true,
      description = {
        "When retention deleted records of TOPIC_EVENTS below the sink's stored offset (the sink"
            + " logs it, stays not ready and shows runlane_sink_retention_gap_records), moves the"
            + " partition's stored offset to the log start and records the range in sink_gaps."
            + " Those events are not in the database. When the stored offset is past the log end"
            + " (the topic made again: runlane_sink_offsets_ahead_partitions), --to says where to"
            + " go on from. Refuses where the stored offset is inside the log."
      },
      footer = ExitCodes.HELP)
  static final class SinkAcceptGap extends Base implements Callable<Integer> {
    @Option(names = "--partition", required = true, description = "The partition of the gap.")
    int partition;

    @Option(
        names = "--to",
        description =
            "Only when the stored offset is past the log end (the topic made again): the offset"
                + " to go on from.")
    Long to;

    @Option(names = "--dry-run", description = "Print the gap; change nothing.")
    boolean dryRun;

    @Override
    public Integer call() throws SQLException {
      try (Cluster cluster = context.cluster()) {
        new SinkCommands(SinkConfig.fromEnv(context.env()), cluster, context.out())
            .acceptGap(partition, to, dryRun);
      }
      return ExitCodes.OK;
    }
  }
}
