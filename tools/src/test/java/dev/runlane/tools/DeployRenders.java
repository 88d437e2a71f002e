package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * deploy/k8s as an operator applies it: every overlay (and the base alone) rendered by {@link
 * Kustomize}, each object read as its Kubernetes API type (fabric8's model, failing on a field the
 * type does not have), custom resources kept as trees.
 */
final class DeployRenders {
  static final Path DEPLOY = Path.of("..", "deploy");
  static final Path K8S = DEPLOY.resolve("k8s");

  /** What an operator applies: the base alone, and every overlay. */
  static final List<String> RENDERS = List.of("base", "overlays/example", "overlays/strimzi");

  /** The optional parts, each rendered onto the base alone too. */
  static final List<String> COMPONENTS =
      List.of(
          "components/sink",
          "components/audit",
          "components/monitoring",
          "components/strimzi",
          "components/kafka-sasl-ssl",
          "components/kafka-private-ca",
          "components/runs-token");

  /**
   * Custom resources with no model here, by API version: Strimzi's (its Java API pins another
   * fabric8 than ours). The Prometheus Operator's are read as fabric8's types like the rest.
   */
  static final Map<String, String> CUSTOM =
      Map.of(
          "KafkaTopic", "kafka.strimzi.io/v1beta2",
          "KafkaUser", "kafka.strimzi.io/v1beta2",
          "Kafka", "kafka.strimzi.io/v1beta2",
          "KafkaNodePool", "kafka.strimzi.io/v1beta2");

  private static final ObjectMapper STRICT =
      JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
  private static final Map<String, Class<? extends HasMetadata>> TYPES =
      Map.of(
          "Deployment", Deployment.class,
          "StatefulSet", StatefulSet.class,
          "Service", Service.class,
          "PodDisruptionBudget", PodDisruptionBudget.class,
          "ConfigMap", ConfigMap.class,
          "Secret", Secret.class,
          "Namespace", Namespace.class,
          "NetworkPolicy", NetworkPolicy.class,
          "PodMonitor", PodMonitor.class,
          "PrometheusRule", PrometheusRule.class);

  private DeployRenders() {}

  /** Every render and every component on the base, by name, as trees. */
  static Map<String, List<ObjectNode>> all() {
    Map<String, List<ObjectNode>> out = new LinkedHashMap<>();
    for (String r : RENDERS) {
      out.put(r, Kustomize.render(K8S.resolve(r)));
    }
    for (String c : COMPONENTS) {
      out.put("base+" + c, Kustomize.renderWith(K8S.resolve("base"), K8S.resolve(c)));
    }
    return out;
  }

  /** {@code objects} read as their Kubernetes types; custom resources are left out. */
  static List<HasMetadata> typed(List<ObjectNode> objects) {
    List<HasMetadata> out = new ArrayList<>();
    for (JsonNode o : objects) {
      String kind = o.path("kind").asText();
      Class<? extends HasMetadata> type = TYPES.get(kind);
      if (type == null) {
        assertThat(CUSTOM).as("a kind these tests know").containsKey(kind);
        assertThat(o.path("apiVersion").asText()).as(kind).isEqualTo(CUSTOM.get(kind));
        continue;
      }
      try {
        out.add(STRICT.treeToValue(o, type));
      } catch (IOException e) {
        throw new UncheckedIOException(Kustomize.id(o), e);
      }
    }
    return out;
  }

  /** The pod template of a workload, or null for any other object. */
  static PodSpec pod(HasMetadata o) {
    return o instanceof Deployment d
        ? d.getSpec().getTemplate().getSpec()
        : o instanceof StatefulSet s ? s.getSpec().getTemplate().getSpec() : null;
  }

  /** The runlane services' containers by service name (ingress, processor, sink, audit). */
  static Map<String, Container> containers(List<HasMetadata> objects) {
    Map<String, Container> out = new LinkedHashMap<>();
    for (HasMetadata o : objects) {
      String name = o.getMetadata().getName();
      if (pod(o) != null && name.startsWith("runlane-")) {
        out.put(name.substring("runlane-".length()), pod(o).getContainers().get(0));
      }
    }
    return out;
  }

  /** The workloads runlane ships (not an overlay's Redis or Kafka). */
  static List<HasMetadata> workloads(List<HasMetadata> objects) {
    return objects.stream()
        .filter(o -> pod(o) != null && o.getMetadata().getName().startsWith("runlane-"))
        .toList();
  }

  /** The kinds of {@code objects}. */
  static Set<String> kinds(List<ObjectNode> objects) {
    Set<String> out = new TreeSet<>();
    objects.forEach(o -> out.add(o.path("kind").asText()));
    return out;
  }
}
