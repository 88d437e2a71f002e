package dev.runlane.embedded;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;

/** Answers "can Testcontainers start a container here?" quickly and without throwing. */
final class DockerProbe {
  private static final Logger LOG = LoggerFactory.getLogger(DockerProbe.class);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(15);

  private DockerProbe() {}

  static boolean dockerAvailable(Map<String, String> env) {
    if (!dockerEndpointConfigured(env)) {
      LOG.debug("no DOCKER_HOST, docker socket or testcontainers.properties: no Docker");
      return false;
    }
    CompletableFuture<Boolean> probe =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return DockerClientFactory.instance().isDockerAvailable();
              } catch (Throwable t) { // any failure of the probe means "no Docker"
                LOG.debug("Docker probe failed", t);
                return false;
              }
            },
            task -> {
              Thread thread = new Thread(task, "runlane-docker-probe");
              thread.setDaemon(true);
              thread.start();
            });
    try {
      return probe.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      LOG.warn("Docker probe gave no answer within {}; using the embedded broker", PROBE_TIMEOUT);
      return false;
    }
  }

  /** Cheap file-system and environment check before asking Testcontainers (which can be slow). */
  static boolean dockerEndpointConfigured(Map<String, String> env) {
    if (!env.getOrDefault("DOCKER_HOST", "").isBlank()) {
      return true;
    }
    String home = System.getProperty("user.home", "");
    String runtimeDir = env.getOrDefault("XDG_RUNTIME_DIR", "");
    return Files.exists(Path.of("/var/run/docker.sock"))
        || (!home.isEmpty()
            && (Files.exists(Path.of(home, ".docker", "run", "docker.sock"))
                || Files.exists(Path.of(home, ".docker", "desktop", "docker.sock"))
                || Files.exists(Path.of(home, ".testcontainers.properties"))))
        || (!runtimeDir.isEmpty() && Files.exists(Path.of(runtimeDir, "docker.sock")));
  }
}
