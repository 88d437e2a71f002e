package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.Report;
import dev.runlane.sink.SinkMetrics;
import io.micrometer.core.instrument.Counter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * A reprocess with the sink running, as an operator would run it: an ingress, two processor apps
 * and the sink under Sume-like load, {@code replay reprocess --from T} through the tools' command
 * line while events keep arriving. The sink absorbs every re-emitted copy: its database ends with
 * each applied event once and each run as the processors have it.
 */
@RealInfra
class ReprocessWithSinkIT {
  private static final double RATE = 150;
  private static final long EVENTS = 2_000;

  private final ObjectMapper json = new ObjectMapper();

  @Test
  void theSinkAbsorbsEveryReEmittedEventAndEndsAsTheProcessorsAre(Infra infra) throws Exception {
    try (Deployment d =
            new Deployment(infra, "reprocess-sink", 6, 2)
                .startIngress()
                .startProcessors()
                .startSink(infra.postgres());
        SumeSimulator simulator = d.simulator(20261207L)) {
      simulator.start(RATE, EVENTS, Duration.ofMinutes(2));
      // Some events are applied and in the database before T, and some received after it: the
      // reprocess has copies to emit that the sink has stored already.
      await()
          .atMost(Duration.ofSeconds(90))
          .ignoreExceptions()
          .until(() -> count(d, "SELECT count(*) FROM processed_events") >= 200);
      // T is the receipt of the 200th event stored, not the clock: however far the pipeline lags
      // the simulator, most of the events are received after T.
      Instant from = nthReceivedAt(d, 200);
      String storedSinceT =
          "SELECT count(*) FROM processed_events WHERE received_at >= '" + from + "'";
      await()
          .atMost(Duration.ofSeconds(90))
          .ignoreExceptions()
          .until(() -> count(d, storedSinceT) >= 150);
      long storedBeforeReprocess = count(d, storedSinceT);

      Deployment.ToolRun run =
          d.tool("replay", "reprocess", "--from", from.toString(), "--timeout-seconds", "120");

      assertThat(run.code()).as(run.err()).isZero();
      d.awaitGeneration(1, Duration.ofSeconds(60));
      Report report = d.verifiedOnceIdle(simulator);

      // What the processors wrote to sume.events: each applied event once, and the re-emitted
      // copies, marked (the verifier checked both against the ledger).
      Set<String> applied = new HashSet<>();
      Set<String> appliedRuns = new HashSet<>();
      long reEmitted = 0;
      List<ConsumerRecord<String, byte[]>> events =
          Topics.readAll(infra.bootstrapServers(), d.topics.events());
      for (ConsumerRecord<String, byte[]> r : events) {
        if (RecordHeaders.get(r.headers(), Replay.HEADER) == null) {
          applied.add(RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID));
          appliedRuns.add(r.key());
        } else {
          reEmitted++;
        }
      }
      assertThat(reEmitted)
          .as("events re-emitted by the reprocess: at least those after T the sink had stored")
          .isGreaterThanOrEqualTo(storedBeforeReprocess);
      assertThat(applied.size() + reEmitted).isEqualTo(events.size());
      assertThat(report.count("applied again by a reprocess (marked)")).isEqualTo(reEmitted);

      // The sink has read every record of sume.events.
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> sinkEvents(d, "written") + sinkEvents(d, "duplicate") >= events.size());

      assertThat(sinkEvents(d, "duplicate")).as("copies absorbed").isEqualTo(reEmitted);
      assertThat(sinkEvents(d, "written")).isEqualTo(applied.size());
      assertThat(sinkEvents(d, "rejected")).isZero();
      assertThat(count(d, "SELECT count(*) FROM processed_events")).isEqualTo(applied.size());
      assertThat(storedRequestIds(d)).isEqualTo(applied);
      assertThat(count(d, "SELECT count(*) FROM processed_events WHERE replay IS NOT NULL"))
          .as("rows stored from a re-emitted copy instead of the first")
          .isZero();

      // Each run's row is its state in the processors' query API.
      Map<String, List<Object>> rows = runRows(d);
      assertThat(rows.keySet()).isEqualTo(appliedRuns);
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      URI processor = URI.create("http://127.0.0.1:" + d.processor(0).adminPort());
      Map<String, List<Object>> api = new HashMap<>();
      for (String runId : rows.keySet()) {
        JsonNode state = runState(http, processor, runId);
        api.put(
            runId,
            List.of(state.path("last_request_id").asText(), state.path("applied_count").asLong()));
      }
      assertThat(rows).isEqualTo(api);

      // The ledger of the reprocess, under the load's retries, copies and reordering: every input
      // record decided once, each decision's record found, each applied event's row (D88, D94).
      Deployment.ToolRun audit = d.tool("audit");
      assertThat(audit.code()).as(audit.out() + audit.err()).isZero();
      assertThat(audit.out()).contains("ledger of generation 1").contains("balanced: ");
    }
  }

  private static double sinkEvents(Deployment d, String outcome) {
    Counter c = d.sinkRegistry().find(SinkMetrics.EVENTS).tag("outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  private static Instant nthReceivedAt(Deployment d, int n) throws SQLException {
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT received_at FROM processed_events ORDER BY received_at OFFSET "
                    + (n - 1)
                    + " LIMIT 1")) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }

  private static long count(Deployment d, String sql) throws SQLException {
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static Set<String> storedRequestIds(Deployment d) throws SQLException {
    Set<String> ids = new HashSet<>();
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT request_id FROM processed_events")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }

  /** Run id -> (last_request_id, applied_count) of the sink's {@code runs} table. */
  private static Map<String, List<Object>> runRows(Deployment d) throws SQLException {
    Map<String, List<Object>> rows = new HashMap<>();
    try (Connection c = d.sinkDatabase();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT run_id, last_request_id, applied_count FROM runs")) {
      while (rs.next()) {
        rows.put(rs.getString(1), List.of(rs.getString(2), rs.getLong(3)));
      }
    }
    return rows;
  }

  private JsonNode runState(HttpClient http, URI processor, String runId) throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(
                    processor.resolve("/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(runId + ": " + response.body()).isEqualTo(200);
    return json.readTree(response.body());
  }
}
