package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.sink.SinkConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * deploy/k8s installs as docs/operations.md says, on the first try (issue 39, D78-D81): each test
 * names the finding it keeps fixed, and fails when that finding is brought back.
 */
class DeployInstallTest {
  private static final String NAMESPACE = "runlane";
  private static final Map<String, List<ObjectNode>> RENDERS = DeployRenders.all();

  /** Finding 1: the namespace is part of what is applied, under Pod Security "restricted". */
  @Test
  void everyRenderBringsItsNamespaceAndPutsEveryObjectInIt() throws Exception {
    for (Map.Entry<String, List<ObjectNode>> render : RENDERS.entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      List<Namespace> namespaces =
          objects.stream().filter(o -> o instanceof Namespace).map(Namespace.class::cast).toList();
      assertThat(namespaces).as(render.getKey()).hasSize(1);
      assertThat(namespaces.get(0).getMetadata().getName()).isEqualTo(NAMESPACE);
      assertThat(namespaces.get(0).getMetadata().getLabels())
          .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
      for (ObjectNode o : render.getValue()) {
        if (!o.path("kind").asText().equals("Namespace")) {
          assertThat(o.path("metadata").path("namespace").asText())
              .as(render.getKey() + ": " + Kustomize.id(o))
              .isEqualTo(NAMESPACE);
        }
      }
    }
    assertThat(DeployManifestsTest.secretExample().getMetadata().getNamespace())
        .as("secret.example.yaml, applied with kubectl apply -f")
        .isEqualTo(NAMESPACE);
  }

  /**
   * Finding 2: no Prometheus Operator kind where its CRDs may be missing (the base), and the label
   * kube-prometheus-stack selects by on every one the monitoring component adds.
   */
  @Test
  void prometheusOperatorObjectsComeOnlyWithTheMonitoringComponentAndItsSelectorLabel() {
    for (String plain : List.of("base", "overlays/strimzi")) {
      assertThat(DeployRenders.kinds(RENDERS.get(plain)))
          .as(plain)
          .doesNotContain("PodMonitor", "PrometheusRule");
    }
    assertThat(DeployRenders.kinds(RENDERS.get("base")))
        .as("the base installs with no CRD")
        .doesNotContain("KafkaTopic", "KafkaUser", "Kafka", "KafkaNodePool");
    List<ObjectNode> monitoring = RENDERS.get("base+components/monitoring");
    for (ObjectNode o : monitoring) {
      if (o.path("apiVersion").asText().startsWith("monitoring.coreos.com/")) {
        assertThat(o.path("metadata").path("labels").path("release").asText())
            .as(Kustomize.id(o))
            .isEqualTo("kube-prometheus-stack");
      }
    }
    JsonNode podMonitor =
        monitoring.stream()
            .filter(o -> o.path("kind").asText().equals("PodMonitor"))
            .findFirst()
            .orElseThrow();
    assertThat(podMonitor.at("/spec/selector/matchExpressions/0/values").toString())
        .contains("runlane-ingress", "runlane-processor", "runlane-sink", "runlane-audit");
    assertThat(podMonitor.at("/spec/podMetricsEndpoints/0/port").asText()).isEqualTo("admin");
  }

  /**
   * Finding 3: an overlay names where every image comes from (no Docker Hub pull of a bare name),
   * every endpoint it sets resolves (a Service it renders, one Strimzi makes, or a qualified name),
   * and the Secret command the docs give creates every key a workload needs.
   */
  @Test
  void overlaysNameEveryImageEveryEndpointAndTheSecretKeysTheirWorkloadsNeed() throws Exception {
    String secretDoc = Files.readString(DeployRenders.K8S.resolve("secret.example.yaml"));
    Set<String> commandKeys = new HashSet<>();
    Matcher literal = Pattern.compile("--from-literal=([A-Z_]+)=").matcher(secretDoc);
    while (literal.find()) {
      commandKeys.add(literal.group(1));
    }
    for (String overlay : List.of("overlays/example", "overlays/strimzi")) {
      List<ObjectNode> rendered = RENDERS.get(overlay);
      List<HasMetadata> objects = DeployRenders.typed(rendered);
      Set<String> hosts = new HashSet<>();
      objects.stream().filter(o -> o instanceof Service).forEach(o -> hosts.add(name(o)));
      rendered.stream()
          .filter(o -> o.path("kind").asText().equals("Kafka"))
          .forEach(k -> hosts.add(k.at("/metadata/name").asText() + "-kafka-bootstrap"));
      Map<String, String> settings = new HashMap<>();
      objects.stream()
          .filter(o -> o instanceof ConfigMap)
          .forEach(m -> settings.putAll(((ConfigMap) m).getData()));
      for (String endpoint : List.of("KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SINK_DATABASE_URL")) {
        String value = settings.get(endpoint);
        if (value == null) {
          continue;
        }
        String host = host(value);
        assertThat(host.contains(".") || hosts.contains(host))
            .as(overlay + ": " + endpoint + " names " + host + ", which nothing here resolves")
            .isTrue();
        assertThat(host).as(overlay + " " + endpoint).doesNotEndWith(".invalid");
      }
      for (HasMetadata w : DeployRenders.workloads(objects)) {
        Container c = DeployRenders.pod(w).getContainers().get(0);
        assertThat(c.getImage())
            .as(overlay + ": " + name(w) + "'s image is in the overlay's images:")
            .matches("[^:]+:[^:]+");
        for (EnvVar v : c.getEnv()) {
          var ref = v.getValueFrom() == null ? null : v.getValueFrom().getSecretKeyRef();
          if (ref != null
              && ref.getName().equals("runlane")
              && !Boolean.TRUE.equals(ref.getOptional())) {
            assertThat(commandKeys)
                .as(overlay + ": the Secret command in secret.example.yaml creates " + ref.getKey())
                .contains(ref.getKey());
          }
        }
      }
    }
  }

  /**
   * Findings 3 and 9: liveness counts only after a startup probe that outlasts the service's own
   * wait at start (the sink's for its database, the ingress's for Kafka), or the kubelet kills it
   * inside that wait and it restart-loops.
   */
  @Test
  void startupProbesOutlastTheServicesOwnWaitsAtStart() {
    Duration sinkWait =
        SinkConfig.fromEnv(Map.of("SINK_DATABASE_URL", "jdbc:postgresql://db:5432/runlane"))
            .databaseStartupTimeout();
    Duration ingressWait =
        IngressConfig.fromEnv(Map.of("SUME_SIGNING_SECRETS", "test-secret")).startupTimeout();
    // The audit reaches Kafka before it serves /health/live: its admin client's default 60 s.
    Map<String, Duration> waits =
        Map.of(
            "sink",
            sinkWait.plusSeconds(60),
            "ingress",
            ingressWait,
            "processor",
            ingressWait,
            "audit",
            Duration.ofSeconds(60));
    for (Map.Entry<String, List<ObjectNode>> render : RENDERS.entrySet()) {
      var containers = DeployRenders.containers(DeployRenders.typed(render.getValue()));
      containers.forEach(
          (service, c) -> {
            var startup = c.getStartupProbe();
            assertThat(startup).as(render.getKey() + " " + service + " startupProbe").isNotNull();
            long seconds = (long) startup.getPeriodSeconds() * startup.getFailureThreshold();
            assertThat(Duration.ofSeconds(seconds))
                .as(render.getKey() + " " + service + ": startup window")
                .isGreaterThan(waits.get(service));
          });
    }
  }

  /**
   * Finding 4: over TLS every client trusts the cluster's CA from a mounted Secret, and every
   * client secret (JAAS line, store passwords) comes from a Secret, never from a ConfigMap.
   */
  @Test
  void tlsClientsMountTheirTrustStoreAndTakeTheirSecretsFromSecrets() {
    for (Map.Entry<String, List<ObjectNode>> render : RENDERS.entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      Map<String, String> kafka = new HashMap<>();
      for (HasMetadata o : objects) {
        if (o instanceof ConfigMap m) {
          assertThat(m.getData().keySet())
              .as(render.getKey() + ": secrets in the ConfigMap " + name(m))
              .noneMatch(k -> k.contains("PASSWORD") || k.contains("JAAS"));
          if (name(m).equals("runlane-kafka")) {
            kafka.putAll(m.getData());
          }
        }
      }
      boolean sasl = kafka.getOrDefault("KAFKA_CLIENT_SECURITY_PROTOCOL", "").startsWith("SASL");
      String trustStore = kafka.get("KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATION");
      for (HasMetadata w : DeployRenders.workloads(objects)) {
        PodSpec pod = DeployRenders.pod(w);
        Container c = pod.getContainers().get(0);
        String where = render.getKey() + " " + name(w);
        if (sasl) {
          EnvVar jaas =
              c.getEnv().stream()
                  .filter(v -> v.getName().equals("KAFKA_CLIENT_SASL_JAAS_CONFIG"))
                  .findFirst()
                  .orElseThrow(() -> new AssertionError(where + ": no SASL login"));
          assertThat(jaas.getValueFrom().getSecretKeyRef()).as(where).isNotNull();
        }
        if (trustStore != null) {
          String dir = Path.of(trustStore).getParent().toString();
          var mount =
              c.getVolumeMounts().stream()
                  .filter(m -> m.getMountPath().equals(dir))
                  .findFirst()
                  .orElseThrow(() -> new AssertionError(where + ": nothing mounted at " + dir));
          Volume volume =
              pod.getVolumes().stream()
                  .filter(v -> v.getName().equals(mount.getName()))
                  .findFirst()
                  .orElseThrow();
          assertThat(volume.getSecret()).as(where + ": the trust store from a Secret").isNotNull();
          assertThat(volume.getSecret().getItems())
              .anyMatch(i -> i.getPath().equals(Path.of(trustStore).getFileName().toString()));
        }
      }
    }
    assertThat(kafkaSetting("overlays/example", "KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATION"))
        .isNotNull();
    assertThat(kafkaSetting("overlays/strimzi", "KAFKA_CLIENT_SSL_TRUSTSTORE_LOCATION"))
        .isNotNull();
    Container ingress =
        DeployRenders.containers(DeployRenders.typed(RENDERS.get("base"))).get("ingress");
    assertThat(ingress.getEnv())
        .anyMatch(
            v ->
                v.getName().equals("STANDARD_WEBHOOKS_SECRETS")
                    && v.getValueFrom().getSecretKeyRef() != null);
  }

  /**
   * Finding 9: replicas spread over nodes, G1 everywhere (SerialGC below 2 CPUs otherwise), the
   * sink's heap at half its container, as the other services'; the tools' at three quarters.
   */
  /**
   * The processor's image starts by mapping the class-data archive its build made, by the training
   * run, from the very jar it runs: an archive made for another path or jar is not used (D105).
   */
  @Test
  void theProcessorImageStartsWithTheClassDataArchiveItsBuildMade() throws Exception {
    String dockerfile = Files.readString(DeployRenders.DEPLOY.resolve("Dockerfile.processor"));
    Matcher made = Pattern.compile("-XX:ArchiveClassesAtExit=(\\S+)").matcher(dockerfile);
    Matcher mapped = Pattern.compile("\"-XX:SharedArchiveFile=([^\"]+)\"").matcher(dockerfile);
    assertThat(made.find()).as("the build's training run").isTrue();
    assertThat(mapped.find()).as("the ENTRYPOINT's archive").isTrue();
    assertThat(mapped.group(1)).isEqualTo(made.group(1));
    assertThat(dockerfile)
        .contains("-cp /app/runlane-processor.jar dev.runlane.processor.ClassDataTraining")
        .contains("\"-jar\", \"/app/runlane-processor.jar\"]");
  }

  @Test
  void workloadsSpreadOverNodesAndRunG1WithHalfTheirMemoryForTheHeap() throws Exception {
    for (Map.Entry<String, List<ObjectNode>> render : RENDERS.entrySet()) {
      for (HasMetadata w : DeployRenders.workloads(DeployRenders.typed(render.getValue()))) {
        PodSpec pod = DeployRenders.pod(w);
        String where = render.getKey() + " " + name(w);
        assertThat(pod.getTopologySpreadConstraints()).as(where).isNotEmpty();
        var spread = pod.getTopologySpreadConstraints().get(0);
        assertThat(spread.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
        assertThat(spread.getLabelSelector().getMatchLabels()).containsEntry("app", name(w));
        assertThat(pod.getContainers().get(0).getEnv())
            .as(where)
            .anyMatch(
                v ->
                    v.getName().equals("JAVA_TOOL_OPTIONS")
                        && v.getValue().contains("-XX:+UseG1GC"));
      }
    }
    for (String service : List.of("ingress", "processor", "sink")) {
      assertThat(Files.readString(DeployRenders.DEPLOY.resolve("Dockerfile." + service)))
          .as("Dockerfile." + service)
          .contains("\"-XX:MaxRAMPercentage=50\"");
    }
    // The tools hold what they read on the heap and keep no native store beside it (D95).
    assertThat(Files.readString(DeployRenders.DEPLOY.resolve("Dockerfile.tools")))
        .contains("\"-XX:MaxRAMPercentage=75\"");
  }

  /**
   * Finding 10: the Service one exposes carries the webhook port alone; the admin ports have their
   * own Services and are reached only from the monitoring namespace and, for the processors' /runs
   * relay, from each other; the production overlay turns the /runs token on.
   */
  @Test
  void adminPortsAreApartAndReachableOnlyFromMonitoringAndPeers() {
    for (Map.Entry<String, List<ObjectNode>> render : RENDERS.entrySet()) {
      List<HasMetadata> objects = DeployRenders.typed(render.getValue());
      for (HasMetadata o : objects) {
        if (o instanceof Service s && name(s).startsWith("runlane-")) {
          Set<String> ports = new HashSet<>();
          s.getSpec().getPorts().stream().map(ServicePort::getName).forEach(ports::add);
          assertThat(ports).as(render.getKey() + ": Service " + name(s)).hasSize(1);
        }
      }
      assertThat(objects)
          .as(render.getKey() + ": the ingress's admin Service")
          .anyMatch(o -> o instanceof Service && name(o).equals("runlane-ingress-admin"));
      List<NetworkPolicy> policies =
          objects.stream()
              .filter(o -> o instanceof NetworkPolicy)
              .map(NetworkPolicy.class::cast)
              .toList();
      for (HasMetadata w : DeployRenders.workloads(objects)) {
        String app = name(w);
        NetworkPolicy policy =
            policies.stream()
                .filter(p -> app.equals(p.getSpec().getPodSelector().getMatchLabels().get("app")))
                .findFirst()
                .orElseThrow(() -> new AssertionError(render.getKey() + ": no policy for " + app));
        assertThat(policy.getSpec().getPolicyTypes()).contains("Ingress");
        for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
          boolean admin =
              rule.getPorts().stream().anyMatch(p -> "admin".equals(p.getPort().getStrVal()));
          if (!admin) {
            continue;
          }
          assertThat(rule.getFrom())
              .as(render.getKey() + " " + app + ": admin from anyone")
              .isNotEmpty();
          for (NetworkPolicyPeer from : rule.getFrom()) {
            boolean monitoring =
                from.getNamespaceSelector() != null
                    && "monitoring"
                        .equals(
                            from.getNamespaceSelector()
                                .getMatchLabels()
                                .get("kubernetes.io/metadata.name"));
            boolean peer =
                from.getPodSelector() != null
                    && from.getNamespaceSelector() == null
                    && app.equals(from.getPodSelector().getMatchLabels().get("app"));
            assertThat(monitoring || peer)
                .as(render.getKey() + " " + app + " admin from " + from)
                .isTrue();
          }
        }
      }
    }
    Container processor =
        DeployRenders.containers(DeployRenders.typed(RENDERS.get("overlays/example")))
            .get("processor");
    assertThat(processor.getEnv())
        .as("the production overlay guards /runs")
        .anyMatch(
            v ->
                v.getName().equals("PROCESSOR_RUNS_TOKEN")
                    && v.getValueFrom().getSecretKeyRef().getKey().equals("RUNS_TOKEN"));
  }

  /** Finding 5: Compose v1 (1.29, Debian's) rejects top-level keys v2 added, such as `name`. */
  @Test
  void theComposeFileHasOnlyTopLevelKeysComposeV1Accepts() {
    JsonNode compose = Kustomize.docs(DeployRenders.DEPLOY.resolve("docker-compose.yml")).get(0);
    Set<String> v1 = Set.of("version", "services", "networks", "volumes", "secrets", "configs");
    compose
        .fieldNames()
        .forEachRemaining(k -> assertThat(v1.contains(k) || k.startsWith("x-")).as(k).isTrue());
  }

  private static String kafkaSetting(String render, String key) {
    return DeployRenders.typed(RENDERS.get(render)).stream()
        .filter(o -> o instanceof ConfigMap && name(o).equals("runlane-kafka"))
        .map(o -> ((ConfigMap) o).getData().get(key))
        .findFirst()
        .orElse(null);
  }

  /** The host of a JDBC URL, a Redis URL or the first of a bootstrap list. */
  private static String host(String endpoint) {
    String first = endpoint.split(",")[0].replaceFirst("^jdbc:", "");
    return first.contains("://") ? URI.create(first).getHost() : first.split(":")[0];
  }

  private static String name(HasMetadata o) {
    return o.getMetadata().getName();
  }
}
