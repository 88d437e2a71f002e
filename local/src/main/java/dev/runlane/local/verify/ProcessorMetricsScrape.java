package dev.runlane.local.verify;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The processor's event outcomes, read from its Prometheus endpoint: {@code
 * runlane_processor_events_total{outcome,layer}} summed over the other tags.
 */
public final class ProcessorMetricsScrape {

  static final String METRIC = "runlane_processor_events_total";

  private final Map<String, Double> byOutcomeAndLayer;

  private ProcessorMetricsScrape(Map<String, Double> byOutcomeAndLayer) {
    this.byOutcomeAndLayer = byOutcomeAndLayer;
  }

  /** Scrapes {@code metricsUri}; an unreachable endpoint reads as all zero. */
  public static ProcessorMetricsScrape scrape(HttpClient client, URI metricsUri) {
    try {
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(metricsUri).timeout(Duration.ofSeconds(5)).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return new ProcessorMetricsScrape(Map.of());
      }
      return parse(response.body());
    } catch (IOException e) {
      return new ProcessorMetricsScrape(Map.of());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new ProcessorMetricsScrape(Map.of());
    }
  }

  /** Parses Prometheus text exposition. */
  static ProcessorMetricsScrape parse(String text) {
    Map<String, Double> values = new HashMap<>();
    for (String line : text.split("\n")) {
      if (!line.startsWith(METRIC + "{")) {
        continue;
      }
      int close = line.lastIndexOf('}');
      if (close < 0) {
        continue;
      }
      Map<String, String> labels = labels(line.substring(METRIC.length() + 1, close));
      double value;
      try {
        value = Double.parseDouble(line.substring(close + 1).trim().split(" ")[0]);
      } catch (NumberFormatException e) {
        continue;
      }
      values.merge(
          labels.getOrDefault("outcome", "") + "/" + labels.getOrDefault("layer", ""),
          value,
          Double::sum);
    }
    return new ProcessorMetricsScrape(values);
  }

  private static Map<String, String> labels(String inner) {
    Map<String, String> labels = new HashMap<>();
    int i = 0;
    while (i < inner.length()) {
      int eq = inner.indexOf("=\"", i);
      if (eq < 0) {
        break;
      }
      String name = inner.substring(i, eq).trim();
      int end = eq + 2;
      StringBuilder value = new StringBuilder();
      while (end < inner.length() && inner.charAt(end) != '"') {
        if (inner.charAt(end) == '\\' && end + 1 < inner.length()) {
          end++;
        }
        value.append(inner.charAt(end));
        end++;
      }
      labels.put(name, value.toString());
      i = end + 1;
      while (i < inner.length() && (inner.charAt(i) == ',' || inner.charAt(i) == ' ')) {
        i++;
      }
    }
    return labels;
  }

  /** The count of one outcome caught by one layer, e.g. ("duplicate", "redis"). */
  public long count(String outcome, String layer) {
    return Math.round(byOutcomeAndLayer.getOrDefault(outcome + "/" + layer, 0.0));
  }

  /** The count of one outcome over every layer. */
  public long count(String outcome) {
    return Math.round(
        byOutcomeAndLayer.entrySet().stream()
            .filter(e -> e.getKey().startsWith(outcome + "/"))
            .mapToDouble(Map.Entry::getValue)
            .sum());
  }
}
