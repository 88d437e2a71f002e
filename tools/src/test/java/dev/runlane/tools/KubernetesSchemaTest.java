package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NetworkPolicy;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1StatefulSet;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every built-in object of every render validated against the Kubernetes API's OpenAPI schema, as
 * the official Java client's models (generated from it) check it: no field the schema lacks, every
 * required field present, lists, objects and strings where the schema has them (numbers are not
 * checked) (D78). Custom resources are left to {@link DeployManifestsTest} (the Prometheus
 * Operator's) and to their kind and API version (Strimzi's).
 */
class KubernetesSchemaTest {
  private static final JsonMapper JSON = new JsonMapper();

  /** The schema check of one kind: throws when the object does not match it. */
  @FunctionalInterface
  interface Schema {
    void validate(JsonElement object) throws IOException;
  }

  private static final Map<String, Schema> SCHEMAS =
      Map.of(
          "Deployment", V1Deployment::validateJsonElement,
          "StatefulSet", V1StatefulSet::validateJsonElement,
          "Service", V1Service::validateJsonElement,
          "PodDisruptionBudget", V1PodDisruptionBudget::validateJsonElement,
          "ConfigMap", V1ConfigMap::validateJsonElement,
          "Secret", V1Secret::validateJsonElement,
          "Namespace", V1Namespace::validateJsonElement,
          "NetworkPolicy", V1NetworkPolicy::validateJsonElement);

  @Test
  void everyBuiltInObjectMatchesTheKubernetesSchema() throws Exception {
    int checked = 0;
    for (Map.Entry<String, List<ObjectNode>> render : DeployRenders.all().entrySet()) {
      for (ObjectNode o : render.getValue()) {
        Schema schema = SCHEMAS.get(o.path("kind").asText());
        if (schema == null) {
          assertThat(
                  DeployRenders.CUSTOM.containsKey(o.path("kind").asText())
                      || o.path("apiVersion").asText().startsWith("monitoring.coreos.com/"))
              .as(render.getKey() + ": " + Kustomize.id(o) + " has no schema here")
              .isTrue();
          continue;
        }
        try {
          schema.validate(JsonParser.parseString(JSON.writeValueAsString(o)));
        } catch (IllegalArgumentException | IOException e) {
          throw new AssertionError(
              render.getKey() + ": " + Kustomize.id(o) + ": " + e.getMessage());
        }
        checked++;
      }
    }
    assertThat(checked).isGreaterThan(50);
  }

  /**
   * The check is no formality: a misspelt field, a missing required one, a list given as text fail.
   * (The generated checks leave numbers unchecked: a list where a port number goes passes.)
   */
  @Test
  void theSchemaRefusesWhatKubernetesWould() throws Exception {
    ObjectNode deployment =
        DeployRenders.all().get("base").stream()
            .filter(o -> o.path("kind").asText().equals("Deployment"))
            .findFirst()
            .orElseThrow();
    ObjectNode misspelt = deployment.deepCopy();
    ((ObjectNode) misspelt.at("/spec/template/spec/containers/0"))
        .put("imagePullPolicies", "Always");
    ObjectNode noSelector = deployment.deepCopy();
    ((ObjectNode) noSelector.get("spec")).remove("selector");
    ObjectNode argsAsText = deployment.deepCopy();
    ((ObjectNode) argsAsText.at("/spec/template/spec/containers/0")).put("args", "status");
    Map<String, ObjectNode> cases =
        Map.of("misspelt", misspelt, "no selector", noSelector, "args as text", argsAsText);
    List<String> accepted = new ArrayList<>();
    for (Map.Entry<String, ObjectNode> c : cases.entrySet()) {
      try {
        V1Deployment.validateJsonElement(
            JsonParser.parseString(JSON.writeValueAsString(c.getValue())));
        accepted.add(c.getKey());
      } catch (IllegalArgumentException expected) {
        // refused, as Kubernetes would
      }
    }
    assertThat(accepted).as("accepted by the schema check").isEmpty();
  }
}
