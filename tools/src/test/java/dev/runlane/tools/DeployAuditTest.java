package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.tools.ledger.AuditWatch;
import dev.runlane.tools.ledger.LedgerCommands;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The continuous audit (D89) as deploy/k8s runs it (D95): one pod of the tools image running {@code
 * audit --watch}, on the settings the processors read and, where the sink runs, on the sink's
 * database; scraped where the other services are, so that its alerts have series to read.
 */
class DeployAuditTest {
  private static final Map<String, List<ObjectNode>> RENDERS = DeployRenders.all();
  private static final List<String> OVERLAYS = List.of("overlays/example", "overlays/strimzi");

  /** One audit per pipeline: two would only double the reads, and a rollout must not overlap. */
  @Test
  void everyOverlayRunsOneAuditWatchFromTheToolsImage() {
    int port =
        Integer.parseInt(
            new CommandLine(new LedgerCommands.Audit())
                .getCommandSpec()
                .findOption("--metrics-port")
                .defaultValue());
    for (String overlay : OVERLAYS) {
      Deployment audit = audit(overlay);
      assertThat(audit.getSpec().getReplicas()).as(overlay).isEqualTo(1);
      assertThat(audit.getSpec().getStrategy().getType()).as(overlay).isEqualTo("Recreate");
      Container c = audit.getSpec().getTemplate().getSpec().getContainers().get(0);
      assertThat(c.getImage()).as(overlay).matches("([^:]+/)?runlane-tools:0\\.1\\.0");
      assertThat(c.getArgs()).as(overlay).startsWith("audit", "--watch");
      int flag = c.getArgs().indexOf("--metrics-port");
      int served = flag < 0 ? port : Integer.parseInt(c.getArgs().get(flag + 1));
      assertThat(c.getPorts())
          .as(overlay + ": the admin port is the one audit --watch serves")
          .anyMatch(p -> p.getName().equals("admin") && p.getContainerPort() == served);
      // Ready once an audit ran to its end (AuditWatch::ranOnce): before, its gauge says nothing.
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo(AdminServer.READY_PATH);
      assertThat(c.getEnvFrom())
          .extracting(e -> e.getConfigMapRef().getName())
          .as(overlay + ": the processors' Kafka and topic settings")
          .contains("runlane-kafka");
    }
  }

  /**
   * Where the sink runs, the audit checks its rows (D94) with the sink's settings; where it does
   * not, the same Deployment starts without them rather than failing on a missing ConfigMap.
   */
  @Test
  void theAuditReadsTheSinksDatabaseWhereTheSinkRunsAndStartsWithoutIt() {
    for (String overlay : OVERLAYS) {
      Container c = audit(overlay).getSpec().getTemplate().getSpec().getContainers().get(0);
      EnvFromSource database =
          c.getEnvFrom().stream()
              .filter(e -> e.getConfigMapRef().getName().equals("runlane-sink-database"))
              .findFirst()
              .orElseThrow(() -> new AssertionError(overlay + ": no runlane-sink-database"));
      assertThat(database.getConfigMapRef().getOptional()).as(overlay).isTrue();
      EnvVar password =
          c.getEnv().stream()
              .filter(v -> v.getName().equals("SINK_DATABASE_PASSWORD"))
              .findFirst()
              .orElseThrow();
      assertThat(password.getValueFrom().getSecretKeyRef().getOptional()).isTrue();
      boolean sink =
          DeployRenders.typed(RENDERS.get(overlay)).stream()
              .anyMatch(o -> o instanceof Deployment && name(o).equals("runlane-sink"));
      boolean map =
          DeployRenders.typed(RENDERS.get(overlay)).stream()
              .anyMatch(o -> o instanceof ConfigMap && name(o).equals("runlane-sink-database"));
      assertThat(map)
          .as(overlay + ": the sink's map is there exactly when the sink is")
          .isEqualTo(sink);
    }
    assertThat(DeployRenders.containers(DeployRenders.typed(RENDERS.get("overlays/example"))))
        .as("the production overlay runs the sink, so its audit checks the rows")
        .containsKeys("sink", "audit");
  }

  /**
   * The PodMonitor scrapes the audit's admin port, and the two alerts read the series the audit
   * exports under the names it registers (Prometheus' text, as the registry writes it).
   */
  @Test
  void theAuditIsScrapedAndItsAlertsReadTheSeriesItExports() {
    JsonNode podMonitor =
        RENDERS.get("overlays/example").stream()
            .filter(o -> o.path("kind").asText().equals("PodMonitor"))
            .findFirst()
            .orElseThrow();
    assertThat(podMonitor.at("/spec/selector/matchExpressions/0/values").toString())
        .contains("\"runlane-audit\"");
    assertThat(podMonitor.at("/spec/podMetricsEndpoints/0/port").asText()).isEqualTo("admin");
    String rules =
        RENDERS.get("overlays/example").stream()
            .filter(o -> o.path("kind").asText().equals("PrometheusRule"))
            .findFirst()
            .orElseThrow()
            .toString();
    PrometheusMeterRegistry registry = Metrics.newRegistry("audit");
    try {
      Gauge.builder(AuditWatch.UNACCOUNTED, () -> 0).register(registry);
      Counter.builder(AuditWatch.RUNS).tag("result", "failed").register(registry);
      String text = registry.scrape();
      for (String series :
          List.of("runlane_audit_unaccounted_records", "runlane_audit_runs_total")) {
        assertThat(text).as("the audit exports").containsPattern("(?m)^" + series + "[{ ]");
        assertThat(rules).as("an alert reads").contains(series);
      }
    } finally {
      registry.close();
    }
  }

  /** The image: the shaded jar tools/pom.xml builds, uid 10001, the JVM as PID 1. */
  @Test
  void theToolsImageRunsTheShadedJarAsPid1AndNotAsRoot() throws Exception {
    Matcher shaded =
        Pattern.compile("<outputFile>\\$\\{project.build.directory}/([^<]+)</outputFile>")
            .matcher(Files.readString(Path.of("pom.xml")));
    assertThat(shaded.find()).isTrue();
    String jar = shaded.group(1);
    String dockerfile = Files.readString(DeployRenders.DEPLOY.resolve("Dockerfile.tools"));
    assertThat(dockerfile)
        .contains("COPY tools/target/" + jar + " /app/" + jar)
        .contains("USER 10001")
        .containsPattern("(?m)^ENTRYPOINT \\[\"java\", .*\"-jar\", \"/app/" + jar + "\"]$")
        .contains("\"-XX:+ExitOnOutOfMemoryError\"");
  }

  private static Deployment audit(String overlay) {
    return DeployRenders.typed(RENDERS.get(overlay)).stream()
        .filter(o -> o instanceof Deployment && name(o).equals("runlane-audit"))
        .map(Deployment.class::cast)
        .findFirst()
        .orElseThrow(() -> new AssertionError(overlay + ": no Deployment runlane-audit"));
  }

  private static String name(HasMetadata o) {
    return o.getMetadata().getName();
  }
}
