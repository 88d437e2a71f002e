package dev.runlane.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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
          System.out.println(
              "usage: java -jar runlane-bench.jar [--quick] [--out DIR] [stage...]\n  stages: "
                  + String.join(" ", BenchContext.allStages())
                  + " (default: all); opt-in: "
                  + String.join(" ", BenchContext.optInStages()));
          return;
        }
        default -> {
          String s = a.toLowerCase(Locale.ROOT);
          if (!BenchContext.allStages().contains(s) && !BenchContext.optInStages().contains(s)) {
            System.err.println(
                "unknown stage '"
                    + a
                    + "'; stages: "
                    + BenchContext.allStages()
                    + ", opt-in: "
                    + BenchContext.optInStages());
            System.exit(2);
          }
          stages.add(s);
        }
      }
    }
    if (stages.isEmpty()) {
      stages.addAll(BenchContext.allStages());
    }
    // Run in the canonical order: e2e needs the ingress result.
    List<String> ordered = new ArrayList<>();
    BenchContext.allStages().stream().filter(stages::contains).forEach(ordered::add);
    BenchContext.optInStages().stream().filter(stages::contains).forEach(ordered::add);
    String jar = BenchMain.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    Results results = new Results(quick ? "quick" : "full");
    // A run with overridden settings must say so in its results, or its figures cannot be
    // reproduced from them.
    java.util.Map<String, String> overrides = new java.util.TreeMap<>();
    BenchContext.passThrough(overrides, IngressStage.TUNING);
    BenchContext.passThrough(overrides, ProcessorStage.TUNING);
    BenchContext.passThrough(
        overrides,
        BenchContext.BROKER_CONFIG_VARIABLE,
        SoakStage.RATE_VARIABLE,
        SoakStage.SECONDS_VARIABLE,
        RecoveryStage.RUNS_VARIABLE);
    if (!overrides.isEmpty()) {
      results.note("settings", "environment overrides: " + overrides);
    }
    results.note(
        "settings",
        "broker settings over the embedded broker's (D27): "
            + BenchContext.brokerConfig(System.getenv(BenchContext.BROKER_CONFIG_VARIABLE)));
    int failures = 0;
    try (BenchContext ctx = new BenchContext(quick, results, jar)) {
      for (String stage : ordered) {
        System.out.printf("%n== %s == start %s%n", stage, java.time.Instant.now());
        long t0 = System.nanoTime();
        java.util.Set<String> topicsBefore = ctx.topics();
        try {
          switch (stage) {
            case "verification" -> new VerifyStage(ctx).run();
            case "ingress" -> new IngressStage(ctx).run();
            case "processor" -> new ProcessorStage(ctx).run();
            case "e2e" -> new EndToEndStage(ctx).run();
            case "recovery" -> new RecoveryStage(ctx).run();
            case "rebuild" -> new RebuildStage(ctx).run();
            case GenerationsStage.STAGE -> new GenerationsStage(ctx).run();
            case SinkStage.STAGE -> new SinkStage(ctx).run();
            case SoakStage.STAGE -> new SoakStage(ctx).run();
            default -> throw new IllegalStateException(stage);
          }
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
            stage, (System.nanoTime() - t0) / 1e9, java.time.Instant.now());
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
