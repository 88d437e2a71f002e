package dev.runlane.tools;

import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.ChildJvm;
import dev.runlane.processor.ProcessorMain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A processor in a JVM of its own, started as it is deployed ({@code ProcessorMain} and its
 * environment), so that a test can kill it with SIGKILL in the middle of a transaction.
 */
final class ProcessorJvm implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Process process;
  private final int adminPort;

  private ProcessorJvm(Process process, int adminPort) {
    this.process = process;
    this.adminPort = adminPort;
  }

  /** Starts it with {@code env}, its output in {@code log}, and waits until it is ready. */
  static ProcessorJvm start(Map<String, String> env, int adminPort, Path log) {
    ProcessBuilder builder =
        new ProcessBuilder(ChildJvm.command(ProcessorMain.class, "-Xmx384m"))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().putAll(env);
    builder.environment().put("PROCESSOR_PORT", Integer.toString(adminPort));
    ProcessorJvm jvm;
    try {
      jvm = new ProcessorJvm(builder.start(), adminPort);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> !jvm.process.isAlive() || jvm.ready());
    if (!jvm.process.isAlive()) {
      throw new IllegalStateException(
          "the processor exited with " + jvm.process.exitValue() + " at start; see " + log);
    }
    return jvm;
  }

  private boolean ready() {
    try {
      HttpResponse<Void> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/health/ready"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.discarding());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** SIGKILL, as {@code kill -9} does; its exit code once it is gone. */
  int kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the processor outlived SIGKILL by 30 s");
    }
    return process.exitValue();
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      try {
        kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
