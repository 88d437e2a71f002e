package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The class-data archive a processor child JVM starts with, made as deploy/Dockerfile.processor
 * makes the image's (D105): one training run of {@code ClassDataTraining} under {@code
 * -XX:ArchiveClassesAtExit}, on the bench jar the children run from, once per bench run. Off with
 * {@code BENCH_PROCESSOR_CDS=false}, to measure the start without it; a training run that fails
 * leaves the children without it, and the stage's notes say so.
 */
final class ClassDataArchive {
  static final String VARIABLE = "BENCH_PROCESSOR_CDS";

  private static List<String> options; // guarded by the class

  private ClassDataArchive() {}

  /** The JVM options that map the archive, made on the first call; none when it is off. */
  static synchronized List<String> options(BenchContext ctx, String stage) {
    if (options == null) {
      options = make(ctx, stage);
    }
    return options;
  }

  private static List<String> make(BenchContext ctx, String stage) {
    String setting = System.getenv().getOrDefault(VARIABLE, "true").strip();
    if (setting.equals("false")) {
      ctx.results.note(
          stage, "processor children start without a class-data archive (" + VARIABLE + "=false)");
      return List.of();
    }
    try {
      Path dir = Files.createTempDirectory("runlane-bench-cds");
      Path archive = dir.resolve("processor.jsa");
      File log = dir.resolve("training.log").toFile();
      long start = System.nanoTime();
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-XX:ArchiveClassesAtExit=" + archive,
                  "-Xlog:cds=error",
                  "-Dlogback.configurationFile=runlane-bench-logback.xml",
                  "-cp",
                  ctx.jar,
                  "dev.runlane.processor.ClassDataTraining")
              .redirectErrorStream(true)
              .redirectOutput(log)
              .start();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(); // exitValue() below throws while the process lives
      }
      if (p.exitValue() != 0 || !Files.exists(archive)) {
        ctx.results.note(
            stage,
            "class-data training FAILED (see " + log + "): children start without an archive");
        return List.of();
      }
      ctx.results.note(
          stage,
          String.format(
              "processor children map a class-data archive (%s, %.0f MiB, trained in %.1f s;"
                  + " %s=false to start without)",
              archive,
              Files.size(archive) / 1048576.0,
              (System.nanoTime() - start) / 1e9,
              VARIABLE));
      return List.of("-XX:SharedArchiveFile=" + archive);
    } catch (IOException e) {
      ctx.results.note(
          stage, "class-data training FAILED: " + e + ": children start without an archive");
      return List.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    }
  }
}
