package dev.runlane.processor;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.RedisDedup;
import dev.runlane.processor.generation.InputChangedException;
import dev.runlane.processor.topology.FaultHook;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point: configuration from the environment, wiring by hand, a named shutdown hook. */
public final class ProcessorMain {
  private static final Logger log = LoggerFactory.getLogger(ProcessorMain.class);

  private ProcessorMain() {}

  public static void main(String[] args) {
    ProcessorApp app;
    try {
      ProcessorConfig config = ProcessorConfig.fromEnv(System.getenv());
      PrometheusMeterRegistry registry = Metrics.newRegistry("processor");
      Dedup dedup =
          config.dedupEnabled()
              ? new RedisDedup(config.redisDedupSettings(), registry)
              : Dedup.disabled();
      app = ProcessorApp.start(config, dedup, registry, FaultHook.NONE);
    } catch (InputChangedException e) {
      log.error("processor not started: {}", e.getMessage());
      System.exit(2);
      return;
    } catch (ConfigException e) {
      log.error("processor not started: {}", e.getMessage());
      System.exit(1);
      return;
    } catch (RuntimeException e) {
      String settings = KafkaClientSettings.explain(e);
      if (settings != null) {
        log.error("processor not started: {}", settings);
        System.exit(1);
        return;
      }
      log.error("processor not started: {}", e.toString(), e);
      System.exit(1);
      return;
    } catch (Error e) {
      log.error("processor not started: {}", e.toString(), e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(app::close, "processor-shutdown"));
    // A processor that cannot recover on its own exits, so that its supervisor notices and an
    // operator reads the one line above saying why (D36); /health/live is DOWN meanwhile.
    app.onFatal(reason -> System.exit(2));
  }
}
