package dev.runlane.bench;

import dev.runlane.bench.probe.Probes;
import dev.runlane.bench.report.Results;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code java -jar bench/target/runlane-bench.jar [--quick] [--out DIR] [stage...]}: runs the
 * stages (all when none is named) and prints the table; writes {@code bench-results.json} and
 * {@code bench-results.md} to {@code bench/target} (or {@code --out}).
 */
public final class BenchMain {
  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "runlane-bench-logback.xml");
    }
    boolean quick = false;
    Path out = Files.isDirectory(Path.of("bench")) ? Path.of("bench", "target") : Path.of(".");
    List<String> stages = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--quick" -> quick = true;
        case "--out" -> out = Path.of(args[++i]);
        case "-h", "--help" -> {
          System.out.println(Stages.usage());
          return;
        }
        default -> {
          String s = a.toLowerCase(Locale.ROOT);
          if (!Stages.exists(s)) {
            System.err.println(Stages.unknown(a));
            System.exit(2);
          }
          stages.add(s);
        }
      }
    }
    List<Stage> ordered = Stages.select(stages);
    Probes probes;
    try {
      probes = Probes.parse(System.getenv(Probes.VARIABLE));
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    String jar = BenchMain.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    Results results = new Results(quick ? "quick" : "full");
    // A run with overridden settings must say so in its results, or its figures cannot be
    // reproduced from them.
    Map<String, String> overrides = new TreeMap<>();
    BenchContext.passThrough(overrides, Stages.variables());
    BenchContext.passThrough(
        overrides, List.of(BenchContext.BROKER_CONFIG_VARIABLE, Probes.VARIABLE));
    if (!overrides.isEmpty()) {
      results.note("settings", "environment overrides: " + overrides);
    }
    results.note(
        "settings",
        "broker settings over the embedded broker's (D27): "
            + BenchContext.brokerConfig(System.getenv(BenchContext.BROKER_CONFIG_VARIABLE)));
    int failures = 0;
    try (BenchContext ctx = new BenchContext(quick, results, jar, probes)) {
      for (Stage s : ordered) {
        String stage = s.name();
        System.out.printf("%n== %s == start %s%n", stage, Instant.now());
        long t0 = System.nanoTime();
        Set<String> topicsBefore = ctx.topics();
        try {
          results.command(stage, ctx.command(stage));
          s.run(ctx);
        } catch (Exception | Error e) {
          failures++;
          results.note(stage, "FAILED: " + e);
          e.printStackTrace();
        }
        try {
          ctx.deleteTopicsSince(topicsBefore);
        } catch (Exception e) {
          results.note(stage, "could not delete its topics: " + e);
        }
        System.out.printf(
            "== %s done in %.0f s == end %s%n",
            stage, (System.nanoTime() - t0) / 1e9, Instant.now());
        results.write(out); // keep what we have if a later stage hangs
      }
    }
    System.out.printf("%n%s", results.table());
    results.write(out);
    System.out.printf(
        "%nwrote %s and %s%n", out.resolve("bench-results.json"), out.resolve("bench-results.md"));
    System.exit(failures == 0 ? 0 : 1);
  }
}
