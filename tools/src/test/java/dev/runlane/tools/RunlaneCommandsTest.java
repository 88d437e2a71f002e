package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.local.LocalMain;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code runlane} command line the docs, the deploy README and the alerts show is routed by
 * the {@code runlane} script to the jar that has it, and that jar's {@code --help} for it exits 0,
 * so a renamed command or a word the script does not route breaks the build (issue 39, finding 6).
 */
class RunlaneCommandsTest {
  private static final Path ROOT = Path.of("..");

  /** {@code `runlane x y`}, {@code `./runlane x y`}, or a line starting {@code ./runlane x y}. */
  private static final Pattern SHOWN =
      Pattern.compile(
          "(?:`(?:\\./)?runlane|(?m:^\\s*\\./runlane)) ([a-z][a-z-]*)((?: [a-z][a-z-]*)?)");

  /** The script's {@code case} arms: {@code words) module=NAME}. */
  private static final Pattern ARM =
      Pattern.compile("(?m)^\\s+([a-z][a-z |-]*)\\) module=([a-z]+)");

  @Test
  void everyCommandTheDocsShowIsRoutedAndAnswersHelp() throws IOException {
    Map<String, String> routes = routes();
    assertThat(routes).containsEntry("dlq", "tools").containsEntry("status", "tools");
    Set<String> commands = shownCommands();
    assertThat(commands).contains("dlq list", "status", "demo", "replay rebuild");
    for (String command : commands) {
      String[] words = command.split(" ");
      String module = routes.getOrDefault(words[0], "local");
      List<String> args = new ArrayList<>(List.of(words));
      if (module.equals("tools") && words[0].equals("tools")) {
        args.remove(0); // `runlane tools --help`: the script drops the word
      }
      if (module.equals("bench")) {
        continue; // its jar is built by its own profile only (bench/pom.xml)
      }
      args.add("--help");
      String[] argv = args.toArray(String[]::new);
      StringWriter err = new StringWriter();
      int exit;
      if (module.equals("tools")) {
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        exit =
            ToolsMain.run(
                Map.of(),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(errBytes, true, StandardCharsets.UTF_8),
                argv);
        err.write(errBytes.toString(StandardCharsets.UTF_8));
      } else {
        CommandLine cli = new CommandLine(new LocalMain());
        cli.setOut(new PrintWriter(new StringWriter()));
        cli.setErr(new PrintWriter(err));
        exit = cli.execute(argv);
      }
      assertThat(exit)
          .as("./runlane " + String.join(" ", argv) + " (" + module + "): " + err)
          .isZero();
    }
  }

  /** The first word of a command line, to the module whose jar the script runs. */
  private static Map<String, String> routes() throws IOException {
    Map<String, String> out = new HashMap<>();
    Matcher arm = ARM.matcher(Files.readString(ROOT.resolve("runlane")));
    while (arm.find()) {
      for (String word : arm.group(1).split("\\|")) {
        out.put(word.trim(), arm.group(2));
      }
    }
    return out;
  }

  /** The command lines shown: first word and, when there is one, the second. */
  private static Set<String> shownCommands() throws IOException {
    Set<String> out = new TreeSet<>();
    List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"));
        Stream<Path> deploy = Files.walk(ROOT.resolve("deploy"))) {
      docs.filter(p -> p.toString().endsWith(".md")).forEach(files::add);
      deploy.filter(p -> p.toString().matches(".*\\.(md|ya?ml)$")).forEach(files::add);
    }
    for (Path f : files) {
      Matcher m = SHOWN.matcher(Files.readString(f));
      while (m.find()) {
        String first = m.group(1);
        String second = m.group(2).trim();
        // A second word is a subcommand only where the first has subcommands.
        out.add(second.isEmpty() || !hasSubcommands(first) ? first : first + " " + second);
      }
    }
    return out;
  }

  private static boolean hasSubcommands(String first) {
    CommandLine tools = new CommandLine(new ToolsMain());
    CommandLine local = new CommandLine(new LocalMain());
    CommandLine sub =
        tools.getSubcommands().containsKey(first)
            ? tools.getSubcommands().get(first)
            : local.getSubcommands().get(first);
    return sub != null && !sub.getSubcommands().isEmpty();
  }
}
