package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.generation.RetiredInputWatch;
import dev.runlane.processor.topology.ProcessorMetrics;
import dev.runlane.processor.topology.RedisBudget;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The metric names the README and the shipped alerts use are the ones a scrape shows. */
class MetricNamesTest {
  private static final Pattern NAME = Pattern.compile("(runlane_processor_[a-z_]+)");

  @Test
  void everyProcessorMetricTheReadmeNamesIsInTheScrapeWithItsUnitsAndBuckets() throws Exception {
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    new ProcessorMetrics(registry);
    new TransactionAwareClients(RedisBudget.unbounded(), registry);
    new RetiredInputWatch(null, registry); // registers its gauge; asks the brokers only in check()
    // Constructed for the meters it registers; it never connects (nothing listens on port 1).
    RedisDedup dedup =
        new RedisDedup(
            new RedisDedup.RedisDedupSettings(
                URI.create("redis://127.0.0.1:1"),
                "k:",
                Duration.ofSeconds(60),
                Duration.ofHours(24),
                Duration.ofMillis(100),
                Duration.ofSeconds(1)),
            registry);
    try (dedup) {
      String scrape = registry.scrape();
      Set<String> named = new LinkedHashSet<>();
      for (Path doc :
          new Path[] {
            Path.of("..", "README.md"), Path.of("..", "deploy", "k8s", "base", "monitoring.yaml")
          }) {
        Matcher m = NAME.matcher(Files.readString(doc));
        while (m.find()) {
          named.add(m.group(1));
        }
      }
      assertThat(named).isNotEmpty();
      for (String name : named) {
        // A sample of the family: the name itself, or a histogram's or counter's series of it.
        assertThat(scrape)
            .as(name)
            .containsPattern("(?m)^" + name + "(_bucket|_count|_sum|_max)?(\\{| )");
      }
      // Latencies are histograms too: aggregatable across pods.
      assertThat(scrape).contains("runlane_processor_end_to_end_latency_seconds_bucket");
      assertThat(scrape).contains("runlane_processor_redis_latency_seconds_bucket");
    }
  }
}
