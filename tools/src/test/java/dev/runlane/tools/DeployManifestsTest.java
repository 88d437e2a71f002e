package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.runlane.common.http.AdminServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
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

/**
 * deploy/ as shipped: every Kubernetes object reads as its API type with no field the type does not
 * have; every variable a manifest or the compose file sets is one the service reads (the README's
 * configuration table, itself the config classes' list); the required ones are set; probes point at
 * paths and ports the services serve; the workloads meet Pod Security "restricted".
 */
class DeployManifestsTest {
  private static final Path DEPLOY = Path.of("..", "deploy");
  private static final ObjectMapper YAML =
      YAMLMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
  private static final Map<String, Class<? extends HasMetadata>> TYPES =
      Map.of(
          "Deployment", Deployment.class,
          "StatefulSet", StatefulSet.class,
          "Service", Service.class,
          "PodDisruptionBudget", PodDisruptionBudget.class,
          "ConfigMap", ConfigMap.class,
          "Secret", Secret.class);

  /** Custom resources of the Prometheus Operator: no model here, checked by shape. */
  private static final Set<String> CUSTOM = Set.of("PodMonitor", "PrometheusRule");

  /** Set for the JVM or as a helper for other values, not read by a service. */
  private static final Set<String> PLATFORM = Set.of("JAVA_TOOL_OPTIONS", "POD_NAME");

  @Test
  void everyObjectIsItsKubernetesTypeWithNoUnknownField() throws Exception {
    List<HasMetadata> objects = base();
    assertThat(objects).extracting(HasMetadata::getKind).contains("Deployment", "StatefulSet");
    for (HasMetadata o : objects) {
      assertThat(unknownFields(o, "")).as(o.getKind() + " " + o.getMetadata().getName()).isEmpty();
    }
    for (JsonNode custom : docs(DEPLOY.resolve("k8s/base/monitoring.yaml"))) {
      if (CUSTOM.contains(custom.path("kind").asText())) {
        assertThat(custom.path("apiVersion").asText()).isEqualTo("monitoring.coreos.com/v1");
      }
    }
  }

  @Test
  void containersSetOnlyVariablesTheirServiceReadsAndEveryRequiredOne() throws Exception {
    Map<String, Set<String>> known = readmeVariables();
    Map<String, Set<String>> generated = new HashMap<>(); // config map -> its keys
    for (Path k :
        List.of(
            Path.of("k8s/base/kustomization.yaml"),
            Path.of("k8s/overlays/example/kustomization.yaml"))) {
      for (JsonNode gen : docs(DEPLOY.resolve(k)).get(0).path("configMapGenerator")) {
        Set<String> keys =
            generated.computeIfAbsent(gen.path("name").asText(), n -> new HashSet<>());
        gen.path("literals").forEach(l -> keys.add(l.asText().split("=", 2)[0]));
      }
    }
    for (Map.Entry<String, Container> e : containers().entrySet()) {
      String service = e.getKey();
      Set<String> names = new HashSet<>();
      e.getValue()
          .getEnvFrom()
          .forEach(
              from ->
                  names.addAll(generated.getOrDefault(from.getConfigMapRef().getName(), Set.of())));
      e.getValue().getEnv().stream().map(EnvVar::getName).forEach(names::add);
      for (String name : names) {
        // The sink creates no topic: the shared Kafka map's topic-creation settings are not its.
        boolean topicCreation =
            service.equals("sink")
                && name.startsWith("TOPIC_")
                && generated.getOrDefault("runlane-kafka", Set.of()).contains(name);
        assertThat(topicCreation || reads(known, service, name))
            .as(service + " reads " + name)
            .isTrue();
      }
      if (service.equals("ingress")) {
        assertThat(names).contains("SUME_SIGNING_SECRETS", "KAFKA_BOOTSTRAP_SERVERS");
      }
    }
    JsonNode compose = docs(DEPLOY.resolve("docker-compose.yml")).get(0).path("services");
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
    Map<String, Integer> adminPorts = Map.of("ingress", 9080, "processor", 9081, "sink", 9082);
    for (Map.Entry<String, Container> e : containers().entrySet()) {
      Container c = e.getValue();
      for (Probe p : List.of(c.getReadinessProbe(), c.getLivenessProbe())) {
        assertThat(p).as(e.getKey() + " probes").isNotNull();
        assertThat(p.getHttpGet().getPath()).isIn(AdminServer.READY_PATH, AdminServer.LIVE_PATH);
        String port = p.getHttpGet().getPort().getStrVal();
        ContainerPort declared =
            c.getPorts().stream().filter(cp -> port.equals(cp.getName())).findFirst().orElseThrow();
        assertThat(declared.getContainerPort()).isEqualTo(adminPorts.get(e.getKey()));
      }
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo(AdminServer.READY_PATH);
      assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo(AdminServer.LIVE_PATH);
    }
    JsonNode compose = docs(DEPLOY.resolve("docker-compose.yml")).get(0).path("services");
    for (String service : adminPorts.keySet()) {
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

  @Test
  void theWorkloadsMeetPodSecurityRestrictedAndPeersResolveDuringRebalances() throws Exception {
    for (HasMetadata o : base()) {
      PodSpec pod =
          o instanceof Deployment d
              ? d.getSpec().getTemplate().getSpec()
              : o instanceof StatefulSet s ? s.getSpec().getTemplate().getSpec() : null;
      if (pod == null) {
        continue;
      }
      assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
      assertThat(pod.getSecurityContext().getSeccompProfile().getType())
          .isEqualTo("RuntimeDefault");
      for (Container c : pod.getContainers()) {
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(c.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals("/tmp"));
        assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
      }
    }
    Service headless =
        base().stream()
            .filter(o -> o instanceof Service s && "None".equals(s.getSpec().getClusterIP()))
            .map(Service.class::cast)
            .findFirst()
            .orElseThrow();
    assertThat(headless.getSpec().getPublishNotReadyAddresses()).isTrue();
  }

  @Test
  void kustomizationsNameFilesThatExist() throws Exception {
    for (Path k : List.of(Path.of("k8s/base"), Path.of("k8s/overlays/example"))) {
      Path dir = DEPLOY.resolve(k);
      for (JsonNode r : docs(dir.resolve("kustomization.yaml")).get(0).path("resources")) {
        assertThat(Files.exists(dir.resolve(r.asText()))).as(k + " -> " + r.asText()).isTrue();
      }
    }
  }

  /** The {@code kafka.version} the parent pom builds and tests with. */
  private static String kafkaVersion() throws IOException {
    Matcher m =
        Pattern.compile("<kafka.version>([^<]+)</kafka.version>")
            .matcher(Files.readString(Path.of("..", "pom.xml")));
    assertThat(m.find()).isTrue();
    return m.group(1);
  }

  /** Every object of the base, read as its Kubernetes type. */
  private static List<HasMetadata> base() throws IOException {
    List<HasMetadata> out = new ArrayList<>();
    for (JsonNode k :
        docs(DEPLOY.resolve("k8s/base/kustomization.yaml")).get(0).path("resources")) {
      for (JsonNode doc : docs(DEPLOY.resolve("k8s/base").resolve(k.asText()))) {
        Class<? extends HasMetadata> type = TYPES.get(doc.path("kind").asText());
        if (type != null) {
          out.add(YAML.treeToValue(doc, type));
        } else {
          assertThat(CUSTOM).as("a kind this test knows").contains(doc.path("kind").asText());
        }
      }
    }
    Path secret = DEPLOY.resolve("k8s/secret.example.yaml");
    out.add(YAML.treeToValue(docs(secret).get(0), Secret.class));
    return out;
  }

  /** The containers of the two workloads, by service. */
  private static Map<String, Container> containers() throws IOException {
    Map<String, Container> out = new HashMap<>();
    for (HasMetadata o : base()) {
      if (o instanceof Deployment d) {
        // runlane-ingress, runlane-sink
        out.put(
            d.getMetadata().getName().substring("runlane-".length()),
            d.getSpec().getTemplate().getSpec().getContainers().get(0));
      } else if (o instanceof StatefulSet s) {
        out.put("processor", s.getSpec().getTemplate().getSpec().getContainers().get(0));
      }
    }
    assertThat(out).containsKeys("ingress", "processor", "sink");
    return out;
  }

  private static List<JsonNode> docs(Path file) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    try (var parser = new YAMLFactory().createParser(file.toFile())) {
      var it = new JsonMapper().readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode n = it.next();
        if (n != null && !n.isNull() && !n.isEmpty()) {
          out.add(n);
        }
      }
    }
    return out;
  }

  /** Variables by service ({@code ingress}, {@code processor}) from the README's table. */
  private static Map<String, Set<String>> readmeVariables() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"));
    String table =
        readme.substring(readme.indexOf("## Configuration"), readme.indexOf("## Operations"));
    Map<String, Set<String>> out =
        Map.of("ingress", new HashSet<>(), "processor", new HashSet<>(), "sink", new HashSet<>());
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
          // "both" is the ingress and the processor; the sink's rows name it.
          if ((usedBy.contains("both") && !service.equals("sink")) || usedBy.contains(service)) {
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
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
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
