package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runlane.common.http.AdminServer;
import dev.runlane.tools.ledger.LedgerCommands;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * deploy/ as shipped: every object of every overlay, of the base alone and of each component on the
 * base reads as its API type with no field the type does not have; every variable a manifest or the
 * compose file sets is one the service reads (the README's configuration table, itself the config
 * classes' list), the required ones are set, every ConfigMap and Secret key they name exists;
 * probes point at paths and ports the services serve; the workloads meet Pod Security "restricted",
 * at pod and at container level.
 */
class DeployManifestsTest {
  private static final Path DEPLOY = DeployRenders.DEPLOY;

  /** Set for the JVM or as a helper for other values, not read by a service. */
  private static final Set<String> PLATFORM = Set.of("JAVA_TOOL_OPTIONS", "POD_NAME");

  @Test
  void everyObjectIsItsKubernetesTypeWithNoUnknownField() throws Exception {
    for (Map.Entry<String, List<ObjectNode>> render : DeployRenders.all().entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      assertThat(objects)
          .extracting(HasMetadata::getKind)
          .as(render.getKey())
          .contains("Namespace", "Deployment", "StatefulSet", "NetworkPolicy");
      for (HasMetadata o : objects) {
        assertThat(unknownFields(o, ""))
            .as(render.getKey() + ": " + o.getKind() + " " + o.getMetadata().getName())
            .isEmpty();
      }
    }
    assertThat(unknownFields(secretExample(), "")).isEmpty();
  }

  @Test
  void containersSetOnlyVariablesTheirServiceReadsAndEveryRequiredOne() throws Exception {
    Map<String, Set<String>> known = readmeVariables();
    Set<String> secretKeys = secretExample().getStringData().keySet();
    for (Map.Entry<String, List<ObjectNode>> render : DeployRenders.all().entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      Map<String, Set<String>> maps = new HashMap<>(); // config map -> its keys
      objects.stream()
          .filter(o -> o instanceof ConfigMap)
          .map(ConfigMap.class::cast)
          .forEach(m -> maps.put(m.getMetadata().getName(), m.getData().keySet()));
      for (Map.Entry<String, Container> e : DeployRenders.containers(objects).entrySet()) {
        String service = e.getKey();
        String where = render.getKey() + " " + service;
        Set<String> names = new HashSet<>();
        for (var from : e.getValue().getEnvFrom()) {
          String map = from.getConfigMapRef().getName();
          // A component on the base alone lacks what its overlay must generate (the sink's
          // runlane-sink-database, components/sink/kustomization.yaml); an overlay has it all,
          // but for an optional map (the audit's runlane-sink-database without the sink, D95).
          boolean overlay = !render.getKey().startsWith("base+");
          boolean optional = Boolean.TRUE.equals(from.getConfigMapRef().getOptional());
          assertThat(maps.containsKey(map) || !overlay || optional)
              .as(where + " reads ConfigMap " + map)
              .isTrue();
          names.addAll(maps.getOrDefault(map, Set.of()));
        }
        for (EnvVar v : e.getValue().getEnv()) {
          names.add(v.getName());
          var ref = v.getValueFrom() == null ? null : v.getValueFrom().getSecretKeyRef();
          if (ref != null && ref.getName().equals("runlane")) {
            // Every key of the Secret `runlane` a workload reads is one the example lists.
            assertThat(secretKeys)
                .as(where + " reads Secret key " + ref.getKey())
                .contains(ref.getKey());
          }
        }
        for (String name : names) {
          // The sink creates no topic, the tools only the control topic: the shared Kafka map's
          // topic-creation settings are not all theirs.
          boolean topicCreation =
              (service.equals("sink") || service.equals("audit"))
                  && name.startsWith("TOPIC_")
                  && maps.get("runlane-kafka").contains(name);
          assertThat(topicCreation || reads(known, service, name))
              .as(where + " reads " + name)
              .isTrue();
        }
        if (service.equals("ingress")) {
          assertThat(names).contains("SUME_SIGNING_SECRETS", "KAFKA_BOOTSTRAP_SERVERS");
        }
        if (service.equals("sink") && !render.getKey().startsWith("base+")) {
          assertThat(names).as(where).contains("SINK_DATABASE_URL", "SINK_DATABASE_PASSWORD");
        }
      }
    }
    JsonNode compose = Kustomize.docs(DEPLOY.resolve("docker-compose.yml")).get(0).path("services");
    for (String service : List.of("ingress", "processor", "sink")) {
      compose
          .path(service)
          .path("environment")
          .fieldNames()
          .forEachRemaining(
              name ->
                  assertThat(reads(known, service, name))
                      .as("compose " + service + " " + name)
                      .isTrue());
    }
    assertThat(compose.path("ingress").path("environment").has("SUME_SIGNING_SECRETS")).isTrue();
  }

  @Test
  void probesAskThePathsAndPortsTheServicesServe() throws Exception {
    Map<String, Integer> adminPorts =
        Map.of("ingress", 9080, "processor", 9081, "sink", 9082, "audit", auditPort());
    for (Map.Entry<String, List<ObjectNode>> render : DeployRenders.all().entrySet()) {
      for (Map.Entry<String, Container> e :
          DeployRenders.containers(DeployRenders.typed(render.getValue())).entrySet()) {
        Container c = e.getValue();
        String where = render.getKey() + " " + e.getKey();
        for (Probe p : List.of(c.getReadinessProbe(), c.getLivenessProbe(), c.getStartupProbe())) {
          assertThat(p).as(where + " probes").isNotNull();
          assertThat(p.getHttpGet().getPath()).isIn(AdminServer.READY_PATH, AdminServer.LIVE_PATH);
          String port = p.getHttpGet().getPort().getStrVal();
          ContainerPort declared =
              c.getPorts().stream()
                  .filter(cp -> port.equals(cp.getName()))
                  .findFirst()
                  .orElseThrow();
          assertThat(declared.getContainerPort()).as(where).isEqualTo(adminPorts.get(e.getKey()));
        }
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo(AdminServer.READY_PATH);
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo(AdminServer.LIVE_PATH);
      }
    }
    JsonNode compose = Kustomize.docs(DEPLOY.resolve("docker-compose.yml")).get(0).path("services");
    for (String service : List.of("ingress", "processor", "sink")) {
      String test = compose.path(service).path("healthcheck").path("test").toString();
      assertThat(test)
          .as(service + " healthcheck")
          .startsWith("[\"CMD\",\"bash\"")
          .contains("/dev/tcp/localhost/" + adminPorts.get(service), AdminServer.READY_PATH);
    }
    assertThat(compose.path("kafka").path("image").asText())
        .as("the broker the build is tested on")
        .isEqualTo("apache/kafka:" + kafkaVersion());
  }

  /**
   * Pod Security "restricted" at pod level and again on every container: scanners (kube-linter,
   * kubescape) check each container's own context (issue 39, D79).
   */
  @Test
  void theWorkloadsMeetPodSecurityRestrictedAndPeersResolveDuringRebalances() throws Exception {
    for (Map.Entry<String, List<ObjectNode>> render : DeployRenders.all().entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      for (HasMetadata o : objects) {
        PodSpec pod = DeployRenders.pod(o);
        if (pod == null) {
          continue;
        }
        String where = render.getKey() + " " + o.getMetadata().getName();
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).as(where).isTrue();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType())
            .as(where)
            .isEqualTo("RuntimeDefault");
        for (Container c : pod.getContainers()) {
          assertThat(c.getSecurityContext().getRunAsNonRoot()).as(where).isTrue();
          assertThat(c.getSecurityContext().getSeccompProfile().getType())
              .as(where)
              .isEqualTo("RuntimeDefault");
          assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).as(where).isFalse();
          assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
          assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).as(where).isTrue();
          assertThat(c.getResources().getLimits()).as(where).containsKeys("cpu", "memory");
        }
      }
      for (HasMetadata o : DeployRenders.workloads(objects)) {
        assertThat(DeployRenders.pod(o).getContainers().get(0).getVolumeMounts())
            .anyMatch(m -> m.getMountPath().equals("/tmp"));
      }
      Service headless =
          objects.stream()
              .filter(o -> o instanceof Service s && "None".equals(s.getSpec().getClusterIP()))
              .map(Service.class::cast)
              .findFirst()
              .orElseThrow();
      assertThat(headless.getSpec().getPublishNotReadyAddresses()).isTrue();
    }
  }

  /** The port {@code audit --watch} serves /metrics and /health on by default (D89). */
  private static int auditPort() {
    return Integer.parseInt(
        new CommandLine(new LedgerCommands.Audit())
            .getCommandSpec()
            .findOption("--metrics-port")
            .defaultValue());
  }

  /** The {@code kafka.version} the parent pom builds and tests with. */
  private static String kafkaVersion() throws IOException {
    Matcher m =
        Pattern.compile("<kafka.version>([^<]+)</kafka.version>")
            .matcher(Files.readString(Path.of("..", "pom.xml")));
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  /** deploy/k8s/secret.example.yaml: the keys an operator puts in the Secret `runlane`. */
  static Secret secretExample() throws IOException {
    return new ObjectMapper()
        .treeToValue(
            Kustomize.docs(DEPLOY.resolve("k8s/secret.example.yaml")).get(0), Secret.class);
  }

  /**
   * Variables by service ({@code ingress}, {@code processor}, {@code sink}, and {@code audit}: the
   * tools' rows) from the README's table.
   */
  private static Map<String, Set<String>> readmeVariables() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"));
    String table =
        readme.substring(readme.indexOf("## Configuration"), readme.indexOf("## Operations"));
    Map<String, Set<String>> out =
        Map.of(
            "ingress",
            new HashSet<>(),
            "processor",
            new HashSet<>(),
            "sink",
            new HashSet<>(),
            "audit",
            new HashSet<>());
    Pattern name = Pattern.compile("`([A-Z][A-Z0-9_<>]*)`");
    for (String row : table.split("\n")) {
      if (!row.startsWith("| `")) {
        continue;
      }
      String[] cells = row.split("\\|");
      String usedBy = cells[cells.length - 1].trim();
      Matcher m = name.matcher(cells[1]);
      while (m.find()) {
        for (String service : out.keySet()) {
          // "both" is the ingress and the processor; the sink's rows name it; the audit is one
          // of the tools (D95).
          boolean both = usedBy.contains("both") && !service.equals("sink");
          String column = service.equals("audit") ? "tools" : service;
          if ((both && !service.equals("audit")) || usedBy.contains(column)) {
            out.get(service).add(m.group(1));
          }
        }
      }
    }
    return out;
  }

  private static boolean reads(Map<String, Set<String>> known, String service, String name) {
    Set<String> names = known.get(service);
    return PLATFORM.contains(name)
        || names.contains(name)
        || (name.startsWith("KAFKA_CLIENT_") && names.contains("KAFKA_CLIENT_<PROPERTY>"));
  }

  /**
   * Fields the YAML set that the API type does not have: the models keep them in {@code
   * additionalProperties} instead of failing, so they are looked for there.
   */
  private static List<String> unknownFields(Object o, String path) {
    return unknownFields(o, path, new IdentityHashMap<>());
  }

  private static List<String> unknownFields(Object o, String path, Map<Object, Boolean> seen) {
    List<String> out = new ArrayList<>();
    if (o == null || seen.put(o, true) != null) {
      return out;
    }
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object e : c) {
        out.addAll(unknownFields(e, path + "[" + i++ + "]", seen));
      }
      return out;
    }
    if (o instanceof Map<?, ?> m) {
      m.forEach((k, v) -> out.addAll(unknownFields(v, path + "." + k, seen)));
      return out;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")
        && !o.getClass().getName().startsWith("io.fabric8.openshift.api.model")) {
      return out;
    }
    for (Method getter : o.getClass().getMethods()) {
      if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get")) {
        continue;
      }
      try {
        Object v = getter.invoke(o);
        if (getter.getName().equals("getAdditionalProperties") && v instanceof Map<?, ?> extra) {
          extra.keySet().forEach(k -> out.add(path + "." + k));
        } else if (!getter.getName().equals("getClass")) {
          out.addAll(unknownFields(v, path + "." + getter.getName().substring(3), seen));
        }
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
    }
    return out;
  }
}
