package dev.runlane.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.MetricDocs;
import dev.runlane.ingress.http.IngressMeters;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The ingress metric names the README and the shipped alerts use are the ones a scrape shows. */
class MetricNamesTest {
  private static final Pattern NAME = Pattern.compile("(runlane_ingress_[a-z_]+)");

  @Test
  void everyIngressMetricTheDocsAndAlertsNameIsInTheScrape() throws Exception {
    PrometheusMeterRegistry registry = Metrics.newRegistry("ingress");
    IngressMeters meters = new IngressMeters(registry);
    meters.register("sume");
    meters.ackLatency("sume", "webhooks", Duration.ofMillis(3));
    meters.controlViewAge(() -> Duration.ofMillis(300));
    String scrape = registry.scrape();
    Set<String> named = MetricDocs.named(NAME);
    assertThat(named).contains("runlane_ingress_requests_total");
    for (String name : named) {
      assertThat(scrape).as(name).containsPattern(MetricDocs.sampleOf(name));
    }
  }
}
