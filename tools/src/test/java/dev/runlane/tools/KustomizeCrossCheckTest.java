package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Kustomize} renders what {@code kubectl kustomize} renders: object for object, field for
 * field, once the hash suffixes kustomize gives generated ConfigMaps are taken off. Runs where
 * kubectl is installed (a developer's machine); CI's has none and skips it (D78).
 */
class KustomizeCrossCheckTest {
  private static final JsonMapper JSON = new JsonMapper();

  @Test
  void theJvmRenderIsKubectlsForEveryOverlay() throws Exception {
    assumeTrue(kubectl(), "kubectl is not installed here");
    for (String render : DeployRenders.RENDERS) {
      Path dir = DeployRenders.K8S.resolve(render);
      Map<String, JsonNode> ours = byId(Kustomize.render(dir));
      Map<String, JsonNode> theirs = byId(unhashed(kubectlKustomize(dir)));
      assertThat(ours.keySet()).as(render).isEqualTo(theirs.keySet());
      ours.forEach((id, o) -> assertThat(o).as(render + ": " + id).isEqualTo(theirs.get(id)));
    }
  }

  private static boolean kubectl() {
    try {
      Process p =
          new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static List<ObjectNode> kubectlKustomize(Path dir) throws Exception {
    Path out = Files.createTempFile("kustomize", ".yaml");
    try {
      Process p =
          new ProcessBuilder("kubectl", "kustomize", dir.toString())
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as("kubectl kustomize " + dir).isZero();
      return Kustomize.docs(out).stream().map(ObjectNode.class::cast).toList();
    } finally {
      Files.delete(out);
    }
  }

  /** The objects with every generated ConfigMap's name, and each reference to it, unhashed. */
  private static List<ObjectNode> unhashed(List<ObjectNode> objects) throws IOException {
    String text = JSON.writeValueAsString(objects);
    for (ObjectNode o : objects) {
      String name = o.path("metadata").path("name").asText();
      if (o.path("kind").asText().equals("ConfigMap") && name.matches(".+-[a-z0-9]{10}")) {
        text =
            text.replace("\"" + name + "\"", "\"" + name.substring(0, name.length() - 11) + "\"");
      }
    }
    return JSON.readValue(
        text.getBytes(StandardCharsets.UTF_8),
        JSON.getTypeFactory().constructCollectionType(List.class, ObjectNode.class));
  }

  private static Map<String, JsonNode> byId(List<ObjectNode> objects) {
    Map<String, JsonNode> out = new TreeMap<>();
    objects.forEach(o -> out.put(Kustomize.id(o), o));
    return out;
  }
}
