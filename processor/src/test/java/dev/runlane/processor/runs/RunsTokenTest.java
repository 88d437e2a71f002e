package dev.runlane.processor.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.common.config.Secret;
import dev.runlane.common.http.AdminServer;
import dev.runlane.processor.ProcessorConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /runs/{id}} with {@code PROCESSOR_RUNS_TOKEN} set answers 401 to a request without the
 * token or with another one, and lets the right one through to the run query (here a processor
 * whose Streams client is not running, which answers 503 {@code not_ready}); without a token
 * configured every request passes, as in the local stack (D80).
 */
class RunsTokenTest {
  private static final String TOKEN = "0123456789abcdef0123456789abcdef-token";
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void runsRefusesARequestWithoutTheConfiguredToken() throws Exception {
    ProcessorConfig config = ProcessorConfig.fromEnv(Map.of("PROCESSOR_RUNS_TOKEN", TOKEN));
    try (AdminServer admin = serve(config.runsToken())) {
      HttpResponse<String> none = get(admin, null);
      assertThat(none.statusCode()).isEqualTo(401);
      assertThat(none.headers().firstValue("WWW-Authenticate"))
          .contains("Bearer realm=\"runlane\"");
      assertThat(none.body()).contains("unauthorized").doesNotContain(TOKEN);
      assertThat(get(admin, "Bearer wrong-" + TOKEN).statusCode()).isEqualTo(401);
      assertThat(get(admin, TOKEN).statusCode()).as("no Bearer scheme").isEqualTo(401);
      HttpResponse<String> right = get(admin, "Bearer " + TOKEN);
      assertThat(right.statusCode()).isEqualTo(503);
      assertThat(right.body()).contains("not_ready");
      // Health and metrics stay open to probes and Prometheus.
      assertThat(status(admin, AdminServer.LIVE_PATH)).isEqualTo(200);
    }
  }

  @Test
  void withoutATokenEveryRequestReachesTheRunQuery() throws Exception {
    try (AdminServer admin = serve(ProcessorConfig.fromEnv(Map.of()).runsToken())) {
      assertThat(get(admin, null).statusCode()).isEqualTo(503);
    }
  }

  @Test
  void aShortTokenStopsTheProcessorNamingTheVariable() {
    assertThatThrownBy(() -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_RUNS_TOKEN", "short")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_RUNS_TOKEN must be at least 32 characters")
        .hasMessageNotContaining("short\"");
  }

  private static AdminServer serve(Optional<Secret> token) {
    RunQueryHandler query =
        new RunQueryHandler(
            () -> null, "runs", () -> new HostInfo("localhost", 0), Rederiving.NEVER, token);
    return AdminServer.start(
        "127.0.0.1",
        0,
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
        () -> true,
        Map.of("/runs/", new BearerGuard(token, query)));
  }

  private static HttpResponse<String> get(AdminServer admin, String authorization)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + "/runs/run-1"));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static int status(AdminServer admin, String path) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin.port() + path)).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }
}
