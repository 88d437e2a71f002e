package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runlane.ingress.http.IngressMeters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The alerts' logic (issue 39, finding 7), checked on the expressions' shape since no PromQL engine
 * runs in the build: a sum of several services' series must not go silent when one service is not
 * scraped, a ratio of events must not count an event twice, the 503 alert counts every outcome the
 * ingress answers 503, and the sink has its scrape and its alerts.
 */
class DeployAlertsTest {
  private static final Map<String, String> ALERTS = alerts();

  /**
   * A sum over no series is no value, and {@code a + b} with one side empty is empty: every operand
   * of a top-level {@code +} carries {@code or vector(0)}.
   */
  @Test
  void aSumOfSeveralServicesStaysDefinedWhenOneIsNotScraped() {
    String deadLetters = ALERTS.get("RunlaneDeadLettersGrowing");
    assertThat(deadLetters).contains("runlane_ingress_requests_total", "runlane_processor_");
    ALERTS.forEach(
        (alert, expr) -> {
          List<String> operands = topLevel(expr, '+');
          if (operands.size() > 1) {
            for (String operand : operands.subList(0, operands.size() - 1)) {
              assertThat(operand).as(alert + ": " + operand).contains("or vector(0)");
            }
            assertThat(operands.get(operands.size() - 1).split(">")[0])
                .as(alert)
                .contains("or vector(0)");
          }
        });
  }

  /**
   * Held and waiting events are decided again later and counted again then: a denominator over
   * every outcome counts them twice. No alert reads the events counter without an outcome matcher.
   */
  @Test
  void noRatioCountsAHeldOrWaitingEventTwice() {
    String stale = ALERTS.get("RunlaneStaleRateHigh");
    assertThat(stale).contains("outcome!~\"held|waiting\"");
    ALERTS.forEach(
        (alert, expr) ->
            assertThat(expr).as(alert).doesNotContain("runlane_processor_events_total["));
  }

  /** Every outcome the ingress answers with 503 (ResponseWriter) counts in the 503 alert. */
  @Test
  void theUnavailableAlertCountsEveryOutcomeAnswered503() {
    String alert = ALERTS.get("RunlaneIngress503s");
    for (IngressMeters.Outcome answered503 :
        List.of(IngressMeters.Outcome.UNAVAILABLE, IngressMeters.Outcome.INTERNAL_ERROR)) {
      assertThat(alert).as(answered503.tag()).contains(answered503.tag());
    }
  }

  @Test
  void theSinkIsScrapedAndAlertedOn() {
    assertThat(ALERTS.values()).anyMatch(e -> e.contains("runlane_sink_database_available"));
    assertThat(ALERTS.values()).anyMatch(e -> e.contains("runlane_sink_retention_gap_records"));
    assertThat(ALERTS.values()).anyMatch(e -> e.contains("runlane_sink_lag_records"));
  }

  /** The alerts of the monitoring component, by name. */
  private static Map<String, String> alerts() {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode doc :
        Kustomize.docs(DeployRenders.K8S.resolve("components/monitoring/monitoring.yaml"))) {
      for (JsonNode group : doc.at("/spec/groups")) {
        for (JsonNode rule : group.path("rules")) {
          out.put(rule.path("alert").asText(), rule.path("expr").asText());
        }
      }
    }
    assertThat(out).hasSizeGreaterThan(10);
    return out;
  }

  /** {@code expr} split at {@code op} outside parentheses, braces and quotes. */
  static List<String> topLevel(String expr, char op) {
    List<String> out = new ArrayList<>();
    int depth = 0;
    boolean quoted = false;
    int start = 0;
    for (int i = 0; i < expr.length(); i++) {
      char c = expr.charAt(i);
      if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && (c == '(' || c == '{' || c == '[')) {
        depth++;
      } else if (!quoted && (c == ')' || c == '}' || c == ']')) {
        depth--;
      } else if (!quoted && depth == 0 && c == op) {
        out.add(expr.substring(start, i).trim());
        start = i + 1;
      }
    }
    out.add(expr.substring(start).trim());
    return out;
  }
}
