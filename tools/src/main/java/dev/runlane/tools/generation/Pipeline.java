package dev.runlane.tools.generation;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.RetiredInputs;
import dev.runlane.tools.Refused;
import dev.runlane.tools.ToolsConfig;
import dev.runlane.tools.kafka.Cluster;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ProducerFencedException;

/**
 * One pipeline as the tools see it: its settings, its cluster, its control record. The first {@link
 * #write} fences any other command still driving the same pipeline (see {@link
 * ControlTopic.Writer}); commands that only read (status, the DLQ's) never do.
 */
public final class Pipeline implements AutoCloseable {
  private final ToolsConfig config;
  private final Cluster cluster;
  private final ControlTopic.Reader control;
  private ControlTopic.Writer writer; // made at the first write

  public Pipeline(ToolsConfig config) {
    this.config = config;
    this.cluster = new Cluster(config.clientSettings());
    ControlTopic.Reader reader = null;
    try {
      try (Admin admin = Admin.create(config.clientSettings())) {
        ControlTopic.ensure(admin, config.controlTopic(), config.topicSettings());
      }
      reader =
          new ControlTopic.Reader(
              config.clientSettings(), config.controlTopic(), config.pipeline());
      this.control = reader;
    } catch (RuntimeException e) {
      if (reader != null) {
        reader.close();
      }
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

  /**
   * Takes the pipeline for this command: fences any other command that writes its control record,
   * then checks that the record is still {@code planned}, the one this command read.
   *
   * @throws dev.runlane.tools.Refused if another command changed it meanwhile
   */
  public void takeOver(Generation planned) {
    if (writer == null) {
      writer =
          new ControlTopic.Writer(
              config.clientSettings(), config.controlTopic(), config.pipeline());
    }
    Generation now = latest();
    if (!now.equals(planned)) {
      throw new Refused(
          "another command changed the pipeline since this one read it (now "
              + now.describe()
              + "); nothing changed by this one: run `runlane status`, then the command again");
    }
  }

  /** Makes {@code generation} the latest record, which every service follows within a second. */
  public void write(Generation generation) {
    write(w -> w.write(generation), generation.describe());
  }

  /** The inputs grows retired, with how far each was copied (D71). */
  public RetiredInputs retired() {
    latest();
    return control.retired();
  }

  /** Makes {@code retired} the pipeline's list of retired inputs (D71). */
  public void write(RetiredInputs retired) {
    write(w -> w.write(retired), "the list of retired inputs");
  }

  private void write(Consumer<ControlTopic.Writer> write, String what) {
    try {
      if (writer == null) {
        writer =
            new ControlTopic.Writer(
                config.clientSettings(), config.controlTopic(), config.pipeline());
      }
      write.accept(writer);
    } catch (ProducerFencedException e) {
      throw new KafkaException(
          "another runlane command started on pipeline "
              + config.pipeline()
              + " and took over; this one stopped before writing "
              + what,
          e);
    }
  }

  @Override
  public void close() {
    if (writer != null) {
      writer.close();
    }
    control.close();
    cluster.close();
  }
}
