package dev.runlane.tools;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The subset of kustomize that deploy/k8s uses, rendered in the JVM so that the build checks the
 * objects an operator applies without a kubectl on CI's machine (D78): {@code resources} (files and
 * directories), {@code components}, {@code configMapGenerator} (create and merge), JSON 6902 {@code
 * patches} with a kind and name-pattern target, {@code namespace}, {@code images} and {@code
 * labels}, in kustomize's order (resources, this level's generators, components, then the
 * transformers). Generated names keep no hash suffix. A field it does not know fails the render, so
 * a kustomization that grows past it is noticed; {@code KustomizeCrossCheckTest} compares it with
 * {@code kubectl kustomize} where kubectl exists.
 */
final class Kustomize {
  private static final JsonMapper JSON = new JsonMapper();
  private static final List<String> KNOWN =
      List.of(
          "apiVersion",
          "kind",
          "namespace",
          "labels",
          "resources",
          "components",
          "configMapGenerator",
          "patches",
          "images");

  private Kustomize() {}

  /** The objects {@code dir}'s kustomization renders to. */
  static List<ObjectNode> render(Path dir) {
    List<ObjectNode> out = new ArrayList<>();
    apply(dir, out);
    return out;
  }

  /** {@code base}'s objects with {@code component} applied, as an overlay of those two would. */
  static List<ObjectNode> renderWith(Path base, Path component) {
    List<ObjectNode> out = render(base);
    apply(component, out);
    return out;
  }

  /** Reads every YAML document of {@code file} (comments-only documents skipped). */
  static List<JsonNode> docs(Path file) {
    List<JsonNode> out = new ArrayList<>();
    try (var parser = new YAMLFactory().createParser(file.toFile())) {
      Iterator<JsonNode> it = JSON.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode n = it.next();
        if (n != null && !n.isNull() && !n.isEmpty()) {
          out.add(n);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(file.toString(), e);
    }
    return out;
  }

  /** Builds {@code dir} onto {@code acc}: a kustomization builds its own list, a component adds. */
  private static void apply(Path dir, List<ObjectNode> acc) {
    JsonNode k = docs(dir.resolve("kustomization.yaml")).get(0);
    k.fieldNames()
        .forEachRemaining(
            f -> {
              if (!KNOWN.contains(f)) {
                throw new IllegalStateException(dir + ": kustomize field not rendered here: " + f);
              }
            });
    boolean component = "Component".equals(k.path("kind").asText());
    List<ObjectNode> own = component ? acc : new ArrayList<>();
    for (JsonNode r : k.path("resources")) {
      Path p = dir.resolve(r.asText()).normalize();
      if (Files.isDirectory(p)) {
        own.addAll(render(p));
      } else {
        docs(p).forEach(d -> own.add((ObjectNode) d.deepCopy()));
      }
    }
    for (JsonNode gen : k.path("configMapGenerator")) {
      generate(dir, gen, own);
    }
    for (JsonNode c : k.path("components")) {
      apply(dir.resolve(c.asText()).normalize(), own);
    }
    for (JsonNode p : k.path("patches")) {
      patch(dir, p, own);
    }
    if (k.has("namespace")) {
      String ns = k.path("namespace").asText();
      own.stream()
          .filter(o -> !"Namespace".equals(o.path("kind").asText()))
          .forEach(o -> meta(o).put("namespace", ns));
    }
    for (JsonNode image : k.path("images")) {
      images(image, own);
    }
    for (JsonNode l : k.path("labels")) {
      l.path("pairs")
          .properties()
          .forEach(e -> own.forEach(o -> labels(o).put(e.getKey(), e.getValue().asText())));
    }
    if (!component) {
      acc.addAll(own);
    }
  }

  private static void generate(Path dir, JsonNode gen, List<ObjectNode> objects) {
    String name = gen.path("name").asText();
    String behavior = gen.path("behavior").asText("create");
    ObjectNode map =
        objects.stream()
            .filter(o -> "ConfigMap".equals(o.path("kind").asText()))
            .filter(o -> name.equals(o.path("metadata").path("name").asText()))
            .findFirst()
            .orElse(null);
    if (behavior.equals("create")) {
      if (map != null) {
        throw new IllegalStateException(dir + ": ConfigMap " + name + " generated twice");
      }
      map = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
      meta(map).put("name", name);
      objects.add(map);
    } else if (!behavior.equals("merge") || map == null) {
      // kustomize's message when a merge finds no map: its generators run before its components.
      throw new IllegalStateException(dir + ": " + name + " does not exist; cannot merge");
    }
    ObjectNode data = map.has("data") ? (ObjectNode) map.get("data") : map.putObject("data");
    for (JsonNode literal : gen.path("literals")) {
      String[] kv = literal.asText().split("=", 2);
      data.put(kv[0], kv[1]);
    }
  }

  private static void patch(Path dir, JsonNode p, List<ObjectNode> objects) {
    JsonNode ops =
        p.has("path")
            ? docs(dir.resolve(p.path("path").asText())).get(0)
            : read(p.path("patch").asText());
    String kind = p.path("target").path("kind").asText();
    Pattern name = Pattern.compile(p.path("target").path("name").asText(".*"));
    for (ObjectNode o : objects) {
      if (o.path("kind").asText().equals(kind)
          && name.matcher(o.path("metadata").path("name").asText()).matches()) {
        for (JsonNode op : ops) {
          operate(o, op);
        }
      }
    }
  }

  private static void operate(ObjectNode o, JsonNode op) {
    JsonPointer ptr = JsonPointer.compile(op.path("path").asText());
    JsonNode parent = o.at(ptr.head());
    String last = ptr.last().getMatchingProperty();
    if (parent.isMissingNode()) {
      throw new IllegalStateException("doc is missing path: " + ptr + " in " + id(o));
    }
    switch (op.path("op").asText()) {
      case "add" -> {
        if (parent instanceof ArrayNode a) {
          if (last.equals("-")) {
            a.add(op.get("value").deepCopy());
          } else {
            a.insert(Integer.parseInt(last), op.get("value").deepCopy());
          }
        } else {
          ((ObjectNode) parent).set(last, op.get("value").deepCopy());
        }
      }
      case "replace" -> {
        if (parent instanceof ArrayNode a) {
          a.set(Integer.parseInt(last), op.get("value").deepCopy());
        } else {
          ((ObjectNode) parent).set(last, op.get("value").deepCopy());
        }
      }
      default -> throw new IllegalStateException("patch op not rendered here: " + op);
    }
  }

  private static void images(JsonNode image, List<ObjectNode> objects) {
    String name = image.path("name").asText();
    for (ObjectNode o : objects) {
      for (String list : List.of("containers", "initContainers")) {
        for (JsonNode c : o.path("spec").path("template").path("spec").path(list)) {
          String current = c.path("image").asText();
          String bare = current.replaceFirst(":[^:/]+$", "");
          if (bare.equals(name)) {
            String tag = current.substring(bare.length()).replaceFirst("^:", "");
            String newName = image.path("newName").asText(name);
            String newTag = image.path("newTag").asText(tag);
            ((ObjectNode) c).put("image", newTag.isEmpty() ? newName : newName + ":" + newTag);
          }
        }
      }
    }
  }

  static String id(JsonNode o) {
    return o.path("kind").asText() + " " + o.path("metadata").path("name").asText();
  }

  private static ObjectNode meta(ObjectNode o) {
    return o.has("metadata") ? (ObjectNode) o.get("metadata") : o.putObject("metadata");
  }

  private static ObjectNode labels(ObjectNode o) {
    ObjectNode m = meta(o);
    return m.has("labels") ? (ObjectNode) m.get("labels") : m.putObject("labels");
  }

  private static JsonNode read(String yaml) {
    try (var parser = new YAMLFactory().createParser(yaml)) {
      return JSON.readTree(parser);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
