package dev.runlane.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The metric names an operator reads about: in the README and in the shipped alerts. */
public final class MetricDocs {

  /** The documents, from a module's directory (where its tests run). */
  public static final List<Path> DOCUMENTS =
      List.of(
          Path.of("..", "README.md"),
          Path.of("..", "deploy", "k8s", "components", "monitoring", "monitoring.yaml"));

  private MetricDocs() {}

  /** Every name the documents hold that {@code name} finds (its group 1), in order. */
  public static Set<String> named(Pattern name) {
    Set<String> named = new LinkedHashSet<>();
    for (Path doc : DOCUMENTS) {
      try {
        Matcher m = name.matcher(Files.readString(doc));
        while (m.find()) {
          named.add(m.group(1));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + doc, e);
      }
    }
    return named;
  }

  /**
   * A regex for a sample of the family {@code name} in a Prometheus scrape: the name itself, or a
   * histogram's or counter's series of it.
   */
  public static String sampleOf(String name) {
    return "(?m)^" + name + "(_bucket|_count|_sum|_max)?(\\{| )";
  }
}
