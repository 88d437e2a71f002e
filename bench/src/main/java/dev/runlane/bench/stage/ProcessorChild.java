package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A processor running as a child JVM ({@code ProcessorMain} from the bench jar), as a pod runs it,
 * and its admin port: the stages that stop and start processors ({@code recovery}, {@code restart})
 * start them with this.
 */
record ProcessorChild(Process process, int port, Path log) {

  /**
   * A port free now for a child's admin port, below the kernel's ephemeral range (32768 and up on
   * Linux): a port from that range can be taken by any process's outgoing connection before the
   * child binds it, and a successor needs it again after its predecessor exited.
   */
  static int freePort() throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(20_000, 32_000);
      try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return probe.getLocalPort();
      } catch (IOException e) {
        // taken: try another
      }
    }
    throw new IOException("no free port in 20000-31999 after 100 attempts");
  }

  /**
   * Starts {@code ProcessorMain} with {@code env} added to this JVM's environment, its output to a
   * temporary file the stage's notes name.
   *
   * @param jvmOptions options before the main class (heap, logback configuration)
   */
  static ProcessorChild start(
      BenchContext ctx,
      String stage,
      String name,
      int port,
      List<String> jvmOptions,
      Map<String, String> env)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // As a pod's JVM starts: with the class-data archive of the processor's start (D105).
    command.addAll(ClassDataArchive.options(ctx, stage));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", ctx.jar, "dev.runlane.processor.ProcessorMain"));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().putAll(env);
    pb.environment().put("PROCESSOR_PORT", Integer.toString(port));
    File log = Files.createTempFile("runlane-bench-processor-" + name, ".log").toFile();
    pb.redirectErrorStream(true).redirectOutput(log);
    ctx.results.note(stage, "processor " + name + " log: " + log);
    return new ProcessorChild(pb.start(), port, log.toPath());
  }

  /** The median time of {@code n} GETs of {@code path} in a row, NaN if one was not a 200. */
  double roundTripMillis(HttpClient http, String path, int n) {
    double[] millis = new double[n];
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      if (!answers(http, path)) {
        return Double.NaN;
      }
      millis[i] = (System.nanoTime() - start) / 1e6;
    }
    Arrays.sort(millis);
    return millis[n / 2];
  }

  /** Whether {@code path} answers 200 now; false while the port is not listening. */
  boolean answers(HttpClient http, String path) {
    return status(http, path) == 200;
  }

  /** The status {@code path} answers now, or -1 while the port is not listening. */
  int status(HttpClient http, String path) {
    try {
      HttpRequest get =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
              .timeout(Duration.ofMillis(500))
              .build();
      return http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1; // not listening yet
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** Stops the child if it still runs: SIGTERM, then SIGKILL after 30 s. */
  void stop() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}
