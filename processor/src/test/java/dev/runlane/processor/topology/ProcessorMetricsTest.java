package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.kafka.RecordHeaders;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.Test;

class ProcessorMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ProcessorMetrics metrics = new ProcessorMetrics(registry);

  @Test
  void readAndAppliedTimeFromTheIngressReceiveTime() {
    metrics.read(receivedAt(String.valueOf(System.currentTimeMillis() - 5_000)));
    metrics.applied(receivedAt(String.valueOf(System.currentTimeMillis() - 7_000)));

    assertThat(timer(ProcessorMetrics.RECEIVE_TO_READ).count()).isEqualTo(1);
    assertThat(timer(ProcessorMetrics.RECEIVE_TO_READ).totalTime(TimeUnit.MILLISECONDS))
        .isBetween(5_000.0, 6_000.0);
    assertThat(timer(ProcessorMetrics.END_TO_END).count()).isEqualTo(1);
    assertThat(timer(ProcessorMetrics.END_TO_END).totalTime(TimeUnit.MILLISECONDS))
        .isBetween(7_000.0, 8_000.0);
  }

  @Test
  void anEventWithoutAUsableReceiveTimeIsNotSampledAndDoesNotFail() {
    metrics.read(new org.apache.kafka.common.header.internals.RecordHeaders());
    metrics.read(receivedAt("not-a-number"));
    metrics.applied(receivedAt(""));
    metrics.read(receivedAt(String.valueOf(System.currentTimeMillis() + 60_000))); // clock skew

    assertThat(timer(ProcessorMetrics.RECEIVE_TO_READ).count()).isZero();
    assertThat(timer(ProcessorMetrics.END_TO_END).count()).isZero();
  }

  private static Headers receivedAt(String value) {
    Headers headers = new org.apache.kafka.common.header.internals.RecordHeaders();
    RecordHeaders.put(headers, RecordHeaders.RECEIVED_AT, value);
    return headers;
  }

  private Timer timer(String name) {
    return registry.find(name).timer();
  }
}
