package dev.runlane.ingress;

import static dev.runlane.ingress.Fixtures.body;
import static dev.runlane.ingress.Fixtures.newId;
import static dev.runlane.ingress.Fixtures.send;
import static dev.runlane.ingress.Fixtures.signed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.EmbeddedKafka;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The broker goes away under load: 503 + Retry-After within the deadline, and no 200 is lost. */
class BrokerOutageIT {

  private EmbeddedKafka kafka;
  private PrometheusMeterRegistry registry;
  private IngressApp app;

  record Answer(String requestId, int status, long millis, String retryAfter) {}

  @BeforeEach
  void start() {
    kafka = EmbeddedKafka.start();
    registry = Metrics.newRegistry("ingress");
    // The default ack deadline (8 s): the point is that a 503 comes before Sume's 10 s.
    app =
        IngressApp.start(
            Fixtures.config(Fixtures.env(kafka.bootstrapServers(), "outage")), registry);
  }

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
    registry.close();
    kafka.close();
  }

  @Test
  void answers503WhileTheBrokerIsDownAndLosesNoAcceptedRequest() throws Exception {
    URI uri = Fixtures.sumeUri(app);
    HttpClient client = Fixtures.httpClient();
    assertThat(send(client, signed(uri, body(newId("warm"), "run-1"))).statusCode()).isEqualTo(200);

    ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
    AtomicBoolean running = new AtomicBoolean(true);
    ExecutorService workers =
        Fixtures.repeat(
            4,
            running::get,
            worker -> {
              String id = newId("out-" + worker);
              long started = System.nanoTime();
              HttpResponse<String> r = send(client, signed(uri, body(id, "run-" + worker)));
              answers.add(
                  new Answer(
                      id,
                      r.statusCode(),
                      TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                      r.headers().firstValue("Retry-After").orElse(null)));
            });
    await().atMost(Duration.ofSeconds(20)).until(() -> count(answers, 200) >= 20);

    assertThat(ready(client)).isEqualTo(200);
    kafka.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> count(answers, 503) >= 4);
    await().atMost(Duration.ofSeconds(30)).until(() -> ready(client) == 503);

    kafka.restart();
    await().atMost(Duration.ofSeconds(60)).until(() -> ready(client) == 200);
    int okBefore = count(answers, 200);
    await().atMost(Duration.ofSeconds(60)).until(() -> count(answers, 200) >= okBefore + 20);
    running.set(false);
    workers.shutdown();
    assertThat(workers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();

    assertThat(answers).allSatisfy(a -> assertThat(a.status()).isIn(200, 503));
    assertThat(answers).allSatisfy(a -> assertThat(a.millis()).isLessThan(10_000));
    assertThat(answers.stream().filter(a -> a.status() == 503))
        .allSatisfy(a -> assertThat(a.retryAfter()).isEqualTo("5"));
    Set<String> accepted =
        answers.stream()
            .filter(a -> a.status() == 200)
            .map(Answer::requestId)
            .collect(Collectors.toSet());
    Set<String> written = Fixtures.requestIds(kafka.bootstrapServers(), "outage.webhooks");
    assertThat(written).containsAll(accepted);
    System.out.printf(
        "outage run: %d answers, %d x 200, %d x 503, %d written%n",
        answers.size(), accepted.size(), count(answers, 503), written.size());
  }

  private int ready(HttpClient client) throws Exception {
    return client
        .send(
            java.net.http.HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + app.adminPort() + "/health/ready"))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static int count(ConcurrentLinkedQueue<Answer> answers, int status) {
    return (int) answers.stream().filter(a -> a.status() == status).count();
  }
}
