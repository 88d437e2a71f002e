package dev.runlane.common.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;

/** The meter registry every service starts from. */
public final class Metrics {

  /** The common tag naming the service. */
  public static final String SERVICE_TAG = "service";

  /** The tag naming a Kafka Streams state store on its meters, whatever the store's type. */
  public static final String STORE_TAG = "state.id";

  private static final String STREAMS_STORE_METERS = "kafka.stream.state";

  /** {@code <type>.state.id} (rocksdb, in.memory, rocksdb.window, ...) becomes {@code state.id}. */
  private static final MeterFilter ONE_STORE_TAG =
      new MeterFilter() {
        @Override
        public Meter.Id map(Meter.Id id) {
          if (!id.getName().startsWith(STREAMS_STORE_METERS)) {
            return id;
          }
          List<Tag> tags = new ArrayList<>();
          for (Tag tag : id.getTagsAsIterable()) {
            tags.add(
                tag.getKey().endsWith("." + STORE_TAG) ? Tag.of(STORE_TAG, tag.getValue()) : tag);
          }
          return id.replaceTags(tags);
        }
      };

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
    // Kafka Streams tags a store's meters with its type (rocksdb.state.id, in.memory.state.id).
    // Prometheus refuses a second set of tag keys under one name, so the in-memory store's meters
    // were dropped, with a WARN at every start. One key for every store type keeps them all.
    registry.config().meterFilter(ONE_STORE_TAG);
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
