package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
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
}
