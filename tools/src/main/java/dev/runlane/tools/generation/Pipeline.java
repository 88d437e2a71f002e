package dev.runlane.tools.generation;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.tools.ToolsConfig;
import dev.runlane.tools.kafka.Cluster;
import java.time.Duration;
import java.util.Map;

/** One pipeline as the tools see it: its settings, its cluster, its control record. */
public final class Pipeline implements AutoCloseable {
  private final ToolsConfig config;
  private final Cluster cluster;
  private final ControlTopic.Reader control;

  public Pipeline(ToolsConfig config) {
    this.config = config;
    this.cluster = new Cluster(config.clientSettings());
    try {
      try (var admin = org.apache.kafka.clients.admin.Admin.create(config.clientSettings())) {
        ControlTopic.ensure(admin, config.controlTopic(), config.topicSettings());
      }
      this.control =
          new ControlTopic.Reader(
              config.clientSettings(), config.controlTopic(), config.pipeline());
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  public ToolsConfig config() {
    return config;
  }

  public Cluster cluster() {
    return cluster;
  }

  public Map<String, Object> clientSettings() {
    return config.clientSettings();
  }

  /** The latest generation: the control record, or generation 0 if there is none. */
  public Generation latest() {
    return control
        .latest(Duration.ofSeconds(30))
        .orElse(Generation.initial(config.applicationId(), config.pipeline()));
  }

  /** Makes {@code generation} the latest record, which every service follows within a second. */
  public void write(Generation generation) {
    ControlTopic.write(
        config.clientSettings(), config.controlTopic(), config.pipeline(), generation);
  }

  @Override
  public void close() {
    control.close();
    cluster.close();
  }
}
