package dev.runlane.ingress;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.metrics.Metrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point: configuration from the environment, wiring by hand, a named shutdown hook. */
public final class IngressMain {
  private static final Logger log = LoggerFactory.getLogger(IngressMain.class);

  private IngressMain() {}

  public static void main(String[] args) {
    IngressApp app;
    try {
      IngressConfig config = IngressConfig.fromEnv(System.getenv());
      PrometheusMeterRegistry registry = Metrics.newRegistry("ingress");
      app = IngressApp.start(config, registry);
    } catch (ConfigException e) {
      log.error("ingress not started: {}", e.getMessage());
      System.exit(1);
      return;
    } catch (RuntimeException e) {
      log.error("ingress not started: {}", describe(e));
      log.debug("start-up failure", e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  app.close();
                  // A graceful stop on SIGTERM is a success: exit 0, not the JVM's 143.
                  Runtime.getRuntime().halt(0);
                },
                "ingress-shutdown"));
  }

  /** The exception and its causes on one line. */
  private static String describe(Throwable e) {
    String settings = KafkaClientSettings.explain(e);
    if (settings != null) {
      return settings;
    }
    StringBuilder sb = new StringBuilder(String.valueOf(e));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      sb.append("; caused by ").append(c);
    }
    return sb.toString();
  }
}
