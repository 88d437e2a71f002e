package dev.runlane.tools;

import dev.runlane.tools.generation.AbortProcedure;
import dev.runlane.tools.generation.CatchUpProcedure;
import dev.runlane.tools.generation.GrowProcedure;
import dev.runlane.tools.generation.Pipeline;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code partitions grow | grow --abort | catch-up}: partition growth (D35, D71, D76). */
final class PartitionsCommands {
  private PartitionsCommands() {}

  @Command(
      name = "partitions",
      mixinStandardHelpOptions = true,
      description = "Partition growth.",
      footer = ExitCodes.HELP,
      subcommands = {Grow.class, CatchUp.class})
  static final class PartitionsCommand extends ToolsMain.Base implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      spec.commandLine().usage(spec.commandLine().getOut());
    }
  }

  @Command(
      name = "grow",
      mixinStandardHelpOptions = true,
      description = {
        "Moves the pipeline to a new input topic with more partitions while Sume keeps"
            + " delivering: the ingress switches at once, the current processors drain the old"
            + " input, the new generation's run store is seeded with every run's state, then the"
            + " processors switch. Re-run the same command to resume after a timeout.",
        "With --abort, cancels a grow that is not active yet: the generation it grew is active"
            + " again and what the ingress wrote to the new topic is copied back."
      },
      footer = ExitCodes.HELP)
  static final class Grow extends ToolsMain.Base implements Callable<Integer> {
    @Option(names = "--to", description = "The new partition count.")
    Integer to;

    @Option(
        names = "--abort",
        description = "Cancel the grow in progress instead (D76); --to is not needed.")
    boolean abort;

    @Option(names = "--dry-run", description = "Check and print the plan; change nothing.")
    boolean dryRun;

    @Option(
        names = "--quiet-seconds",
        description =
            "How long the old input must also receive nothing once every ingress acknowledged"
                + " the new one (default: none when an ingress acknowledged, 10 when none did:"
                + " ingresses that predate the acknowledgements write none).")
    Long quietSeconds;

    @Option(
        names = "--timeout-seconds",
        defaultValue = "1800",
        description = "How long each wait may take (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Override
    public Integer call() {
      if (abort) {
        try (Pipeline pipeline = context.pipeline()) {
          new AbortProcedure(pipeline, new Steps(context.out()))
              .run(
                  new AbortProcedure.Options(
                      true,
                      quietSeconds == null ? Duration.ZERO : Duration.ofSeconds(quietSeconds),
                      Duration.ofSeconds(timeoutSeconds)));
        }
        return ExitCodes.OK;
      }
      if (to == null) {
        throw new BadUsage("--to <count> is required (or --abort)");
      }
      try (Pipeline pipeline = context.pipeline()) {
        new GrowProcedure(pipeline, new Steps(context.out()), Clock.systemUTC())
            .run(
                new GrowProcedure.Options(
                    to,
                    dryRun,
                    quietSeconds == null ? null : Duration.ofSeconds(quietSeconds),
                    Duration.ofSeconds(timeoutSeconds)));
      }
      return ExitCodes.OK;
    }
  }

  @Command(
      name = "catch-up",
      mixinStandardHelpOptions = true,
      description = {
        "Copies what was written to an input a grow retired, after the grow copied it, into the"
            + " active input (an ingress with another TOPIC_CONTROL wrote it;"
            + " runlane_processor_retired_input_unread_records counts it)."
      },
      footer = ExitCodes.HELP)
  static final class CatchUp extends ToolsMain.Base implements Callable<Integer> {
    @Option(names = "--dry-run", description = "Count what would be copied; change nothing.")
    boolean dryRun;

    @Override
    public Integer call() {
      try (Pipeline pipeline = context.pipeline()) {
        new CatchUpProcedure(pipeline, new Steps(context.out())).run(dryRun);
      }
      return ExitCodes.OK;
    }
  }
}
