package dev.runlane.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
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

  @Test
  void streamsStoreMetersOfEveryStoreTypeShareOneTagKey() {
    PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
    try {
      // As Kafka Streams names them: the store's id tag carries its type.
      Gauge.builder("kafka.stream.state.put.latency.max", () -> 1.0)
          .tags("rocksdb.state.id", "runs", "task.id", "0_1")
          .register(registry);
      Gauge.builder("kafka.stream.state.put.latency.max", () -> 2.0)
          .tags("in.memory.state.id", "pending-events", "task.id", "0_1")
          .register(registry);

      Gauge.builder("kafka.stream.state.put.latency.max", () -> 3.0)
          .tags("rocksdb.window.state.id", "windows", "task.id", "0_1")
          .register(registry);

      assertThat(registry.find("kafka.stream.state.put.latency.max").gauges()).hasSize(3);
      assertThat(registry.scrape())
          .contains("state_id=\"runs\"")
          .contains("state_id=\"pending-events\"")
          .contains("state_id=\"windows\"")
          .doesNotContain("in_memory_state_id");
    } finally {
      registry.close();
    }
  }
}
