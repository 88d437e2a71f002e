package dev.runlane.embedded;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A service's main class in a JVM of its own, on this JVM's class path: for kill -9 and exits. */
public final class ChildJvm {
  private ChildJvm() {}

  /** The command line: this JVM's java, {@code options}, this class path and {@code main}. */
  public static List<String> command(Class<?> main, String... options) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of(options));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    return command;
  }
}
