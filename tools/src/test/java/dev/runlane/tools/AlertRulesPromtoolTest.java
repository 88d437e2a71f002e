package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alerts as {@code promtool test rules} runs them: each alert fires on a synthetic series of
 * its trouble, and none fires on healthy ones (issue 39, finding 7: the dead-letter sum with one
 * service unscraped, the stale ratio with held and waiting events, 503s from internal errors). Runs
 * where promtool is installed (Debian's {@code prometheus} package); CI's machine has none and
 * skips it, leaving {@link DeployAlertsTest}'s shape checks (D78).
 */
class AlertRulesPromtoolTest {
  private static final YAMLMapper YAML = new YAMLMapper();
  private static final String EVAL = "40m";

  /** Healthy: every service scraped, events applied, nothing failing. */
  private static final Map<String, String> HEALTHY =
      Map.ofEntries(
          Map.entry(
              "runlane_processor_events_total{outcome=\"applied\",layer=\"store\"}", "0+600x60"),
          Map.entry("runlane_processor_events_total{outcome=\"stale\",layer=\"store\"}", "0+6x60"),
          Map.entry("runlane_processor_events_total{outcome=\"held\",layer=\"store\"}", "0+300x60"),
          Map.entry("runlane_processor_events_total{outcome=\"invalid\",layer=\"decode\"}", "0x60"),
          Map.entry("runlane_processor_apply_failures_total{result=\"retried\"}", "0x60"),
          Map.entry("runlane_processor_apply_failures_total{result=\"dead_lettered\"}", "0x60"),
          Map.entry("runlane_ingress_requests_total{outcome=\"accepted\"}", "0+600x60"),
          Map.entry("runlane_ingress_requests_total{outcome=\"dead_lettered\"}", "0x60"),
          Map.entry("runlane_processor_transactions_aborted_total", "0x60"),
          Map.entry("runlane_processor_redis_available", "1x60"),
          Map.entry("kafka_consumer_fetch_manager_records_lag_max{service=\"processor\"}", "10x60"),
          Map.entry("runlane_processor_end_to_end_latency_seconds_bucket{le=\"0.1\"}", "0+600x60"),
          Map.entry("runlane_processor_end_to_end_latency_seconds_bucket{le=\"+Inf\"}", "0+600x60"),
          Map.entry("runlane_sink_events_total{outcome=\"rejected\"}", "0x60"),
          Map.entry("runlane_sink_retention_gap_records", "0x60"),
          Map.entry("runlane_sink_offsets_ahead_partitions", "0x60"),
          Map.entry("runlane_sink_database_available", "1x60"),
          Map.entry("runlane_sink_lag_records", "5x60"),
          Map.entry("up{pod=\"runlane-processor-0\"}", "1x60"),
          Map.entry("runlane_processor_retired_input_unread_records", "0x60"),
          Map.entry("runlane_ingress_control_view_age_seconds{pod=\"runlane-ingress-0\"}", "1x60"),
          Map.entry(
              "runlane_ingress_control_stale_after_seconds{pod=\"runlane-ingress-0\"}", "10x60"),
          Map.entry("runlane_audit_unaccounted_records", "0x60"),
          Map.entry("runlane_audit_runs_total{result=\"balanced\"}", "0+1x60"),
          Map.entry("runlane_audit_runs_total{result=\"failed\"}", "0x60"));

  /** Per alert: the series of its trouble (added to, or replacing, the healthy ones). */
  private static final Map<String, Map<String, String>> TROUBLE =
      Map.ofEntries(
          // Only the processor is scraped: the ingress's and apply-failure series do not exist.
          Map.entry(
              "RunlaneDeadLettersGrowing",
              Map.of(
                  "runlane_processor_events_total{outcome=\"invalid\",layer=\"decode\"}",
                  "0+5x60")),
          // 30 stale of 130 final outcomes (23%); held and waiting are decided again later.
          Map.entry(
              "RunlaneStaleRateHigh",
              Map.of(
                  "runlane_processor_events_total{outcome=\"stale\",layer=\"store\"}", "0+180x60",
                  "runlane_processor_events_total{outcome=\"applied\",layer=\"store\"}", "0+600x60",
                  "runlane_processor_events_total{outcome=\"held\",layer=\"store\"}", "0+600x60",
                  "runlane_processor_events_total{outcome=\"waiting\",layer=\"redis\"}",
                      "0+600x60")),
          Map.entry(
              "RunlaneApplyFailures",
              Map.of("runlane_processor_apply_failures_total{result=\"retried\"}", "0+1x60")),
          Map.entry(
              "RunlaneTransactionsAborting",
              Map.of("runlane_processor_transactions_aborted_total", "0+60x60")),
          Map.entry("RunlaneRedisDegraded", Map.of("runlane_processor_redis_available", "0x60")),
          Map.entry(
              "RunlaneConsumerLag",
              Map.of(
                  "kafka_consumer_fetch_manager_records_lag_max{service=\"processor\"}",
                  "20000x60")),
          Map.entry(
              "RunlaneEndToEndLatency",
              Map.of(
                  "runlane_processor_end_to_end_latency_seconds_bucket{le=\"0.1\"}", "0x60",
                  "runlane_processor_end_to_end_latency_seconds_bucket{le=\"5\"}", "0+600x60",
                  "runlane_processor_end_to_end_latency_seconds_bucket{le=\"+Inf\"}", "0+600x60")),
          // 10% of answers are internal errors, which the ingress answers 503.
          Map.entry(
              "RunlaneIngress503s",
              Map.of("runlane_ingress_requests_total{outcome=\"internal_error\"}", "0+60x60")),
          Map.entry(
              "RunlaneSinkRejectedRecords",
              Map.of("runlane_sink_events_total{outcome=\"rejected\"}", "0+1x60")),
          Map.entry(
              "RunlaneSinkRetentionGap", Map.of("runlane_sink_retention_gap_records", "40x60")),
          Map.entry(
              "RunlaneSinkOffsetsAhead", Map.of("runlane_sink_offsets_ahead_partitions", "1x60")),
          Map.entry("RunlaneSinkDatabaseDown", Map.of("runlane_sink_database_available", "0x60")),
          Map.entry("RunlaneSinkLag", Map.of("runlane_sink_lag_records", "20000+100x60")),
          Map.entry("RunlaneNotReady", Map.of("up{pod=\"runlane-processor-0\"}", "0x60")),
          // A stray ingress wrote to an input a grow retired (D71).
          Map.entry(
              "RunlaneWritesToRetiredInput",
              Map.of("runlane_processor_retired_input_unread_records", "3x60")),
          // An ingress whose view of the control topic is past its bound answers 503 (D71).
          Map.entry(
              "RunlaneIngressControlViewStale",
              Map.of(
                  "runlane_ingress_control_view_age_seconds{pod=\"runlane-ingress-0\"}",
                  "0+60x60")),
          // The ledger does not balance (D89).
          Map.entry("RunlaneAuditUnaccounted", Map.of("runlane_audit_unaccounted_records", "3x60")),
          // Every audit of the last half hour failed (D89).
          Map.entry(
              "RunlaneAuditFailing",
              Map.of(
                  "runlane_audit_runs_total{result=\"balanced\"}", "0x60",
                  "runlane_audit_runs_total{result=\"failed\"}", "0+1x60")));

  /** Labels an alert carries beyond its rule's, from its {@code by} clause. */
  private static final Map<String, Map<String, String>> GROUPED =
      Map.of(
          "RunlaneNotReady",
          Map.of("pod", "runlane-processor-0"),
          "RunlaneIngressControlViewStale",
          Map.of("pod", "runlane-ingress-0"));

  @Test
  void eachAlertFiresOnItsTroubleAndNoneOnHealthySeries(@TempDir Path dir) throws Exception {
    assumeTrue(promtool(), "promtool is not installed here");
    JsonNode rule =
        Kustomize.docs(DeployRenders.K8S.resolve("components/monitoring/monitoring.yaml")).stream()
            .filter(d -> d.path("kind").asText().equals("PrometheusRule"))
            .findFirst()
            .orElseThrow();
    Files.writeString(dir.resolve("rules.yaml"), YAML.writeValueAsString(rule.get("spec")));
    assertThat(run(dir, "check", "rules", "rules.yaml")).isEmpty();
    Map<String, JsonNode> alerts = new LinkedHashMap<>();
    rule.at("/spec/groups/0/rules").forEach(r -> alerts.put(r.path("alert").asText(), r));
    assertThat(TROUBLE.keySet()).as("every alert has a trouble case").isEqualTo(alerts.keySet());

    ObjectNode tests = JsonNodeFactory.instance.objectNode();
    tests.putArray("rule_files").add("rules.yaml");
    tests.put("evaluation_interval", "1m");
    ArrayNode cases = tests.putArray("tests");
    cases.add(testCase(HEALTHY, alerts, null));
    for (String alert : alerts.keySet()) {
      Map<String, String> series = new LinkedHashMap<>(HEALTHY);
      if (alert.equals("RunlaneDeadLettersGrowing")) {
        series.keySet().removeIf(s -> s.startsWith("runlane_ingress_") || s.contains("apply_"));
      }
      series.putAll(TROUBLE.get(alert));
      cases.add(testCase(series, alerts, alert));
    }
    Files.writeString(dir.resolve("tests.yaml"), YAML.writeValueAsString(tests));
    assertThat(run(dir, "test", "rules", "tests.yaml")).isEmpty();
  }

  /** One promtool test: every alert is evaluated; only {@code firing} (or none) is expected. */
  private static ObjectNode testCase(
      Map<String, String> series, Map<String, JsonNode> alerts, String firing) {
    ObjectNode test = JsonNodeFactory.instance.objectNode();
    test.put("interval", "1m");
    ArrayNode input = test.putArray("input_series");
    series.forEach((s, values) -> input.addObject().put("series", s).put("values", values));
    ArrayNode checks = test.putArray("alert_rule_test");
    alerts.forEach(
        (name, rule) -> {
          ObjectNode check = checks.addObject().put("eval_time", EVAL).put("alertname", name);
          ArrayNode expected = check.putArray("exp_alerts");
          if (name.equals(firing)) {
            ObjectNode alert = expected.addObject();
            ObjectNode labels = ((ObjectNode) rule.get("labels")).deepCopy();
            GROUPED.getOrDefault(name, Map.of()).forEach(labels::put);
            alert.set("exp_labels", labels);
            alert.set("exp_annotations", rule.get("annotations"));
          }
        });
    return test;
  }

  private static boolean promtool() {
    try {
      Process p = new ProcessBuilder("promtool", "--version").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Runs promtool in {@code dir}; returns its output when it fails, else an empty list. */
  private static List<String> run(Path dir, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("promtool"));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return p.exitValue() == 0 ? List.of() : List.of(out);
  }
}
