package dev.runlane.common.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.metrics.Metrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AdminServerTest {

  private static PrometheusMeterRegistry registry;
  private static HttpClient client;

  private final AtomicBoolean ready = new AtomicBoolean(true);
  private AdminServer server;

  @BeforeAll
  static void setUpAll() {
    registry = Metrics.newRegistry("test-service");
    registry.counter("runlane.test.requests", "outcome", "ok").increment();
    client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterAll
  static void tearDownAll() {
    registry.close();
  }

  @BeforeEach
  void start() {
    server =
        AdminServer.start(
            "127.0.0.1",
            0,
            registry,
            ready::get,
            Map.of(
                "/runs/",
                ex ->
                    AdminServer.send(
                        ex,
                        200,
                        ErrorBody.CONTENT_TYPE,
                        ("{\"path\":\"" + ex.getRequestURI().getPath() + "\"}")
                            .getBytes(StandardCharsets.UTF_8)),
                "/boom",
                ex -> {
                  throw new IllegalStateException("boom");
                }));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void turnsNaglesAlgorithmOffForTheJdkServer() {
    // The delay it removes (~40 ms per request on a kept-alive connection) is measured by the
    // bench's recovery stage, not timed here.
    assertThat(System.getProperty(AdminServer.NODELAY_PROPERTY)).isEqualTo("true");
  }

  @Test
  void bindsAnEphemeralPort() {
    assertThat(server.port()).isPositive();
  }

  @Test
  void liveIsUp() throws Exception {
    HttpResponse<String> r = get("/health/live");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"status\":\"UP\"}");
    assertThat(r.headers().firstValue("Content-Type")).hasValue(ErrorBody.CONTENT_TYPE);
  }

  @Test
  void readyFollowsTheSupplier() throws Exception {
    assertThat(get("/health/ready").statusCode()).isEqualTo(200);

    ready.set(false);
    HttpResponse<String> down = get("/health/ready");

    assertThat(down.statusCode()).isEqualTo(503);
    assertThat(down.body()).isEqualTo("{\"status\":\"DOWN\"}");
  }

  @Test
  void metricsArePrometheusText() throws Exception {
    HttpResponse<String> r = get("/metrics");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    assertThat(r.body())
        .contains("runlane_test_requests_total{outcome=\"ok\",service=\"test-service\"} 1.0")
        .contains("jvm_memory_used_bytes")
        .contains("process_uptime_seconds");
  }

  @Test
  void servesExtraRoutes() throws Exception {
    HttpResponse<String> r = get("/runs/run-42");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("{\"path\":\"/runs/run-42\"}");
  }

  @Test
  void unknownPathIs404WithErrorBody() throws Exception {
    for (String path : new String[] {"/nope", "/", "/health/livex", "/metrics/x"}) {
      HttpResponse<String> r = get(path);

      assertThat(r.statusCode()).as(path).isEqualTo(404);
      assertThat(r.body()).contains("\"error\":\"not_found\"");
    }
  }

  @Test
  void otherMethodIs405() throws Exception {
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(uri("/health/live"))
                .POST(HttpRequest.BodyPublishers.ofString("x"))
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("GET, HEAD");
    assertThat(r.body()).contains("\"error\":\"method_not_allowed\"");
  }

  @Test
  void failingHandlerIs500() throws Exception {
    HttpResponse<String> r = get("/boom");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(r.body()).contains("\"error\":\"internal_error\"").doesNotContain("boom");
  }

  @Test
  void closesQuickly() {
    long start = System.nanoTime();

    server.close();
    server.close();

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
  }

  private HttpResponse<String> get(String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(5)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.port() + path);
  }
}
