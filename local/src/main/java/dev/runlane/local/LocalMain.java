package dev.runlane.local;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code runlane up | send | demo}: the pipeline on one machine. */
@Command(
    name = "runlane",
    mixinStandardHelpOptions = true,
    version = "runlane local 0.1.0",
    description = "Runs the runlane pipeline on this machine (no Docker, only a JDK).",
    subcommands = {UpCommand.class, SendCommand.class, DemoCommand.class, SizingCommand.class})
public final class LocalMain implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line, for tests. */
  static CommandLine commandLine() {
    return new CommandLine(new LocalMain());
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }
}
