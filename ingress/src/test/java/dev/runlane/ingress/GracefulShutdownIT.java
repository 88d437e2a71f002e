package dev.runlane.ingress;

import static dev.runlane.ingress.Fixtures.body;
import static dev.runlane.ingress.Fixtures.newId;
import static dev.runlane.ingress.Fixtures.signed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.ChildJvm;
import dev.runlane.embedded.FreePorts;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM under load, on a real process ({@link IngressMain} in a child JVM): every request
 * answered 200 is in the topic, and the process exits 0.
 */
@RealInfra
class GracefulShutdownIT {

  @Test
  void sigtermDuringLoadLosesNoAcceptedRequestAndExitsZero(Infra infra) throws Exception {
    String prefix = infra.uniqueName("graceful");
    int port = FreePorts.next();
    int adminPort = FreePorts.next();
    Map<String, String> env = Fixtures.env(infra.bootstrapServers(), prefix);
    env.put("INGRESS_HOST", "127.0.0.1");
    env.put("INGRESS_PORT", Integer.toString(port));
    env.put("INGRESS_ADMIN_PORT", Integer.toString(adminPort));
    ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(IngressMain.class, "-Xmx256m"));
    pb.environment().putAll(env);
    File log = Path.of("target", "graceful-shutdown-ingress.log").toFile();
    pb.redirectErrorStream(true).redirectOutput(log);
    Process process = pb.start();
    try {
      HttpClient client = Fixtures.httpClient();
      URI admin = URI.create("http://127.0.0.1:" + adminPort + "/health/ready");
      await()
          .atMost(Duration.ofSeconds(60))
          .ignoreExceptions()
          .until(
              () ->
                  client
                          .send(
                              HttpRequest.newBuilder(admin).build(),
                              HttpResponse.BodyHandlers.discarding())
                          .statusCode()
                      == 200);

      URI uri = URI.create("http://127.0.0.1:" + port + "/webhooks/sume");
      ConcurrentLinkedQueue<String> accepted = new ConcurrentLinkedQueue<>();
      AtomicInteger other = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      ExecutorService workers =
          Fixtures.repeat(
              8,
              process::isAlive,
              worker -> {
                String id = newId("gs-" + worker);
                try {
                  HttpResponse<String> r =
                      client.send(
                          signed(uri, body(id, "run-" + worker)),
                          HttpResponse.BodyHandlers.ofString());
                  if (r.statusCode() == 200) {
                    accepted.add(id);
                  } else {
                    other.incrementAndGet();
                  }
                } catch (IOException e) {
                  refused.incrementAndGet(); // not answered: Sume would retry
                }
              });
      await().atMost(Duration.ofSeconds(30)).until(() -> accepted.size() >= 300);

      process.destroy(); // SIGTERM
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      workers.shutdown();
      assertThat(workers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

      assertThat(process.exitValue()).isZero();
      Set<String> written = Fixtures.requestIds(infra.bootstrapServers(), prefix + ".webhooks");
      assertThat(written).containsAll(List.copyOf(accepted));
      System.out.printf(
          "graceful shutdown: %d x 200 (all written, %d records), %d other answers, %d unanswered%n",
          accepted.size(), written.size(), other.get(), refused.get());
    } finally {
      process.destroyForcibly();
    }
  }
}
