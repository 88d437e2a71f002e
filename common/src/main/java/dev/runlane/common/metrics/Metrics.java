package dev.runlane.common.metrics;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/** The meter registry every service starts from. */
public final class Metrics {

  /** The common tag naming the service. */
  public static final String SERVICE_TAG = "service";

  private Metrics() {}

  /**
   * A Prometheus registry with the common tag {@code service=<service>} and the JVM binders bound:
   * memory, GC, threads, class loader, processor, uptime, JVM info and file descriptors. Closing
   * the registry also closes the GC binder (it listens to GC notifications).
   *
   * @param service the service name, e.g. {@code ingress}
   */
  public static PrometheusMeterRegistry newRegistry(String service) {
    if (service == null || service.isBlank()) {
      throw new IllegalArgumentException("service must not be blank");
    }
    JvmGcMetrics gc = new JvmGcMetrics();
    PrometheusMeterRegistry registry =
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT) {
          @Override
          public void close() {
            try {
              gc.close();
            } finally {
              super.close();
            }
          }
        };
    registry.config().commonTags(SERVICE_TAG, service);
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new JvmInfoMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    return registry;
  }
}
