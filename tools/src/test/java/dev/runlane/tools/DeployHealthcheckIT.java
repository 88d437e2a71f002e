package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The compose file's healthcheck commands, run as the container runtime runs them (exec form,
 * bash), against the services running here: healthy when ready, unhealthy when nothing answers.
 */
@RealInfra
class DeployHealthcheckIT {

  @Test
  void theComposeHealthchecksPassAgainstRunningServicesAndFailWithoutThem(Infra infra)
      throws Exception {
    JsonNode services =
        new YAMLMapper()
            .readTree(Path.of("..", "deploy", "docker-compose.yml").toFile())
            .path("services");
    try (Deployment d = new Deployment(infra, "health", 3, 1).startIngress().startProcessors()) {
      assertThat(run(services.path("ingress"), 9080, d.ingressAdminPort())).isZero();
      assertThat(run(services.path("processor"), 9081, d.processor(0).adminPort())).isZero();
      int closed = d.processor(0).adminPort();
      d.stopProcessors();
      assertThat(run(services.path("processor"), 9081, closed)).isNotZero();
    }
  }

  /** The service's healthcheck command, pointed at {@code port} instead of {@code composePort}. */
  private static int run(JsonNode service, int composePort, int port) throws Exception {
    List<String> command = new ArrayList<>();
    service.path("healthcheck").path("test").forEach(n -> command.add(n.asText()));
    assertThat(command).first().isEqualTo("CMD");
    List<String> exec = new ArrayList<>();
    for (String part : command.subList(1, command.size())) {
      exec.add(part.replace("localhost/" + composePort, "localhost/" + port));
    }
    Process p = new ProcessBuilder(exec).redirectErrorStream(true).start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("healthcheck finished").isTrue();
    return p.exitValue();
  }
}
