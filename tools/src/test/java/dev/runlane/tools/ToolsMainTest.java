package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ToolsMainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String... args) {
    return ToolsMain.run(
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        args);
  }

  @Test
  void everyCommandsHelpListsTheExitCodes() {
    for (String[] command :
        new String[][] {
          {"--help"},
          {"status", "--help"},
          {"replay", "rebuild", "--help"},
          {"replay", "reprocess", "--help"},
          {"partitions", "grow", "--help"}
        }) {
      out.reset();
      assertThat(run(Map.of(), command)).isZero();
      assertThat(out.toString(StandardCharsets.UTF_8))
          .as(String.join(" ", command))
          .contains("Exit codes:", "3  refused", "4  a wait timed out");
    }
  }

  @Test
  void aBadSettingIsAUsageErrorNamingTheVariable() {
    int code = run(Map.of("TOPIC_CONTROL", "no spaces"), "status");

    assertThat(code).isEqualTo(ExitCodes.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("TOPIC_CONTROL='no spaces'");
  }

  @Test
  void aMissingRequiredOptionIsAUsageError() {
    assertThat(run(Map.of(), "partitions", "grow")).isEqualTo(ExitCodes.USAGE);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--to");
  }

  /**
   * A Kafka nobody answers at is one line on stderr and exit 1, with no WARN from the client's
   * reconnects before it on stdout, where the tools log (issue 39, finding 8, D81).
   */
  @Test
  void aKafkaThatCannotBeReachedIsOneLineAndExitOneWithNoWarn() throws IOException {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    PrintStream stdout = System.out;
    ByteArrayOutputStream logs = new ByteArrayOutputStream();
    System.setOut(new PrintStream(logs, true, StandardCharsets.UTF_8));
    int code;
    try {
      code =
          run(
              Map.of(
                  "KAFKA_BOOTSTRAP_SERVERS",
                  "127.0.0.1:" + closed,
                  "KAFKA_CLIENT_DEFAULT_API_TIMEOUT_MS",
                  "3000"),
              "status");
    } finally {
      System.setOut(stdout);
    }
    assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(ExitCodes.ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8).strip().lines())
        .singleElement()
        .satisfies(line -> assertThat(line).startsWith("failed: "));
    // Log events, not logback's own status lines ("|-WARN in ..."), which it prints at start.
    assertThat(logs.toString(StandardCharsets.UTF_8).lines())
        .noneMatch(l -> l.contains(" WARN  ["));
  }
}
