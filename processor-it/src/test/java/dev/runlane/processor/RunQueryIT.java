package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.StoreNames;
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
  /** PROCESSOR_RUNS_TOKEN of both instances: the relay carries it (D80). */
  private static final String TOKEN = "relay-test-token-0123456789abcdef0123";

  private static final String BEARER = "Bearer " + TOKEN;

  @Test
  void anInstanceRelaysQueriesForRunsItDoesNotHost(Infra infra) throws Exception {
    String name = infra.uniqueName("query");
    try (ProcessorHarness a =
            new ProcessorHarness(infra, name).with("PROCESSOR_RUNS_TOKEN", TOKEN).start();
        ProcessorHarness b =
            new ProcessorHarness(infra, name).with("PROCESSOR_RUNS_TOKEN", TOKEN).start()) {
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

      // The query answers committed state (D44): the counters above move at apply time, the
      // answer once b's transaction has committed.
      String relayed = hostedByB;
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> b.get("/runs/" + relayed, BEARER).statusCode() == 200);
      HttpResponse<byte[]> response = a.get("/runs/" + hostedByB, BEARER);
      assertThat(response.statusCode()).as("relayed with the token").isEqualTo(200);
      assertThat(RunStateJson.fromJson(response.body()).runId()).isEqualTo(hostedByB);
      assertThat(b.get("/runs/" + hostedByB, BEARER).statusCode()).isEqualTo(200);
      assertThat(a.get("/runs/" + hostedByB).statusCode()).as("no token").isEqualTo(401);
    }
  }

  /**
   * A query answers what is committed (D44): an applied event whose transaction has not committed
   * yet, which an abort would take back, is not shown. Reading it instead, a poller could see the
   * run at 2 events, then at 1 after an abort, then at 2 again.
   */
  @Test
  void aQueryNeverShowsAStateItsTransactionHasNotCommitted(Infra infra) throws Exception {
    try (ProcessorHarness h = ProcessorHarness.unique(infra, "committed")) {
      // Commits far apart, so that an applied event stays uncommitted for seconds.
      h.with("PROCESSOR_COMMIT_INTERVAL_MS", "6000").start();
      Instant t0 = Instant.parse("2026-12-01T10:00:00Z");
      h.send("run-x", "first", t0);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> stateOf(h, "run-x"), state -> state != null && state.appliedCount() == 1);

      h.send("run-x", "second", t0.plusSeconds(1));
      await().atMost(Duration.ofSeconds(30)).until(() -> h.count("applied", "store") == 2);
      // Applied, in the store, not committed: the answer is still the first state.
      RunState meanwhile = stateOf(h, "run-x");
      assertThat(meanwhile.lastRequestId()).isEqualTo("first");
      assertThat(meanwhile.appliedCount()).isEqualTo(1);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> stateOf(h, "run-x"), state -> state.appliedCount() == 2);
    }
  }

  /** The run's state, or null while the query API has none (404) or is not ready (503). */
  private static RunState stateOf(ProcessorHarness h, String runId) throws Exception {
    HttpResponse<byte[]> response = h.get("/runs/" + runId);
    return response.statusCode() == 200 ? RunStateJson.fromJson(response.body()) : null;
  }

  private static HostInfo hostOf(ProcessorHarness h, String runId) {
    var metadata =
        h.app.streams().queryMetadataForKey(StoreNames.RUNS, runId, Serdes.String().serializer());
    return metadata == null ? null : metadata.activeHost();
  }
}
