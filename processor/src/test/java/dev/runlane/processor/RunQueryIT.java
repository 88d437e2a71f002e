package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.StoreNames;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

/** {@code GET /runs/{id}} answers from any instance: the one hosting the run, or by relay. */
@RealInfra
class RunQueryIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void anInstanceRelaysQueriesForRunsItDoesNotHost(Infra infra) throws Exception {
    String name = infra.uniqueName("query");
    try (ProcessorHarness a =
            new ProcessorHarness(infra.bootstrapServers(), infra.redisUri(), name, 16).start();
        ProcessorHarness b =
            new ProcessorHarness(infra.bootstrapServers(), infra.redisUri(), name, 16).start()) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  a.app.streams().state() == KafkaStreams.State.RUNNING
                      && b.app.streams().state() == KafkaStreams.State.RUNNING
                      && hostOf(a, "run-0") != null);
      int runs = 12;
      for (int i = 0; i < runs; i++) {
        a.send("run-" + i, "req-" + i, Instant.parse("2026-11-29T10:00:00Z"));
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> a.count("applied", "store") + b.count("applied", "store") == runs);

      HostInfo hostA = new HostInfo("localhost", a.app.adminPort());
      String hostedByB = null;
      for (int i = 0; i < runs; i++) {
        if (!hostA.equals(hostOf(a, "run-" + i))) {
          hostedByB = "run-" + i;
        }
      }
      assertThat(hostedByB).as("with two instances, some run lives on the other one").isNotNull();

      HttpResponse<byte[]> response = get(a, "/runs/" + hostedByB);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(RunStateJson.fromJson(response.body()).runId()).isEqualTo(hostedByB);
      assertThat(get(b, "/runs/" + hostedByB).statusCode()).isEqualTo(200);
    }
  }

  private static HostInfo hostOf(ProcessorHarness h, String runId) {
    var metadata =
        h.app.streams().queryMetadataForKey(StoreNames.RUNS, runId, Serdes.String().serializer());
    return metadata == null ? null : metadata.activeHost();
  }

  private static HttpResponse<byte[]> get(ProcessorHarness h, String path) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + h.app.adminPort() + path)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }
}
