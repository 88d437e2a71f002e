package dev.runlane.sink;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.kafka.KafkaClientSettings;
import dev.runlane.common.metrics.Metrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point: configuration from the environment, wiring by hand, a named shutdown hook. */
public final class SinkMain {
  private static final Logger log = LoggerFactory.getLogger(SinkMain.class);

  private SinkMain() {}

  public static void main(String[] args) {
    SinkApp app;
    try {
      SinkConfig config = SinkConfig.fromEnv(System.getenv());
      PrometheusMeterRegistry registry = Metrics.newRegistry("sink");
      app = SinkApp.start(config, registry, SinkMain::exitOnLoopDeath);
    } catch (ConfigException e) {
      log.error("sink not started: {}", e.getMessage());
      System.exit(1);
      return;
    } catch (RuntimeException e) {
      log.error("sink not started: {}", describe(e));
      log.debug("start-up failure", e);
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(app::close, "sink-shutdown"));
  }

  /**
   * A consumer loop that died leaves nothing to do in this JVM: exit, so that the supervisor starts
   * a fresh one (D63). From a thread of its own, because exiting runs the shutdown hook, which
   * waits for the loop's thread.
   */
  private static void exitOnLoopDeath() {
    log.error("sink consumer loop died; exiting with 1 so that its supervisor restarts it");
    Thread exit = new Thread(() -> System.exit(1), "sink-exit");
    exit.start();
  }

  /** The exception and its causes on one line (a JDBC URL carries no password: D55). */
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
