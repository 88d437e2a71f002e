package dev.runlane.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

class MetricsTest {

  @Test
  void bindsJvmMetricsWithServiceTag() {
    PrometheusMeterRegistry registry = Metrics.newRegistry("ingress");
    try {
      assertThat(registry.find("jvm.memory.used").tag("service", "ingress").gauges()).isNotEmpty();
      assertThat(registry.find("jvm.threads.live").gauge()).isNotNull();
      assertThat(registry.find("jvm.classes.loaded").gauge()).isNotNull();
      assertThat(registry.find("system.cpu.count").gauge()).isNotNull();
      assertThat(registry.find("process.uptime").timeGauge()).isNotNull();
      assertThat(registry.scrape()).contains("service=\"ingress\"");
    } finally {
      registry.close();
    }
    assertThat(registry.isClosed()).isTrue();
  }
}
