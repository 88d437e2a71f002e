package dev.runlane.bench.load;

import dev.runlane.bench.probe.ProcessCpu;
import dev.runlane.embedded.ChildJvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A service in a JVM of its own, started by the cost stage so that its CPU time is its own: its
 * pid, its log file, and a stop that waits for it (D92).
 */
public final class Child implements AutoCloseable {
  /**
   * The options every child JVM gets, runlane's and the bare pipeline's alike: the same heap limit
   * and the bench's quiet logging, so that neither pays for more GC or logging than the other.
   */
  static final List<String> JVM_OPTIONS =
      List.of("-Xmx1g", "-Dlogback.configurationFile=runlane-bench-logback.xml");

  private final String name;
  private final Process process;
  private final Path log;

  private Child(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code main} with {@code args} on this JVM's class path, its environment this one's plus
   * {@code env}, its output to a temporary log file.
   */
  public static Child start(String name, Class<?> main, List<String> args, Map<String, String> env)
      throws IOException {
    List<String> command =
        new ArrayList<>(ChildJvm.command(main, JVM_OPTIONS.toArray(String[]::new)));
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().putAll(env);
    Path log = Files.createTempFile("runlane-bench-cost-" + name + "-", ".log");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    return new Child(name, pb.start(), log);
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return log;
  }

  /** Its CPU milliseconds so far. */
  public long cpuMillis() {
    return ProcessCpu.millis(process.pid());
  }

  /**
   * Waits until {@code ready} holds.
   *
   * @throws IllegalStateException naming the log, when the process ends first or {@code timeout}
   *     passes
   */
  public void awaitReady(BooleanSupplier ready, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!ready.getAsBoolean()) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            name + " exited " + process.exitValue() + " before it was ready; log: " + log);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " not ready within " + timeout + "; log: " + log);
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
  }

  /** Whether {@code GET http://127.0.0.1:port/path} answers 200 now. */
  public static boolean answers200(int port, String path) {
    try {
      HttpRequest get =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
              .timeout(Duration.ofMillis(500))
              .build();
      return HttpClient.newHttpClient()
              .send(get, HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false; // not listening yet
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** SIGTERM, then SIGKILL if it has not ended in 30 s. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
