package dev.runlane.local.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pipeline's last layer: the sink's database holds every applied event once, and each run's row
 * equals its state in {@code sume.runs} (which the query API was checked against).
 */
final class DatabaseCheck {
  private static final Pattern SINK_EVENTS =
      Pattern.compile("^runlane_sink_events_total\\{[^}]*outcome=\"(\\w+)\"[^}]*} (\\S+)$");
  private static final Pattern SINK_RUNS =
      Pattern.compile("^runlane_sink_runs_total\\{[^}]*outcome=\"(\\w+)\"[^}]*} (\\S+)$");

  private final PipelineVerifier.SinkTarget target;
  private final HttpClient http;
  private final ObjectMapper json = new ObjectMapper();

  DatabaseCheck(PipelineVerifier.SinkTarget target, HttpClient http) {
    this.target = target;
    this.http = http;
  }

  record Result(List<Check> checks, long rows, long duplicates, long refused) {}

  /** Waits until the database holds as many events as were applied, then compares. */
  Result check(Set<String> applied, Map<String, JsonNode> runs, Duration settleTimeout) {
    List<Check> checks = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(target.jdbcUrl(), target.user(), null)) {
      long deadline = System.nanoTime() + settleTimeout.toNanos();
      Set<String> settled = storedIds(c);
      while (settled.size() < applied.size() && System.nanoTime() < deadline) {
        LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
        settled = storedIds(c);
      }
      Set<String> stored = settled;
      List<String> missing = applied.stream().filter(id -> !stored.contains(id)).toList();
      Set<String> appliedSet = new HashSet<>(applied);
      List<String> extra = stored.stream().filter(id -> !appliedSet.contains(id)).toList();
      List<String> both = new ArrayList<>(missing.stream().map(id -> id + " missing").toList());
      extra.forEach(id -> both.add(id + " never applied"));
      checks.add(
          Check.of(
              "every applied event once in processed_events",
              both,
              stored.size() + " rows for " + applied.size() + " applied events"));
      List<String> mismatches = compareRuns(c, runs);
      checks.add(
          Check.of(
              "runs table equals /runs/{id}",
              mismatches,
              runs.size() + " runs compared field by field"));
      Map<String, Long> events = scrape(SINK_EVENTS);
      Map<String, Long> upserts = scrape(SINK_RUNS);
      return new Result(
          checks,
          stored.size(),
          events.getOrDefault("duplicate", 0L),
          upserts.getOrDefault("refused", 0L));
    } catch (SQLException e) {
      checks.add(new Check("sink database readable", false, e.toString()));
      return new Result(checks, 0, 0, 0);
    }
  }

  private static Set<String> storedIds(Connection c) throws SQLException {
    Set<String> ids = new HashSet<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT request_id FROM processed_events")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }

  private List<String> compareRuns(Connection c, Map<String, JsonNode> runs) throws SQLException {
    Map<String, List<Object>> rows = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT run_id, last_request_id, floor(extract(epoch from last_created_at))::bigint,"
                    + " last_created_at_nanos, last_type, applied_count,"
                    + " (extract(epoch from updated_at) * 1000)::bigint, data::text FROM runs")) {
      while (rs.next()) {
        Instant createdAt = Instant.ofEpochSecond(rs.getLong(3), rs.getInt(4));
        rows.put(
            rs.getString(1),
            List.of(
                rs.getString(2),
                createdAt.toString(),
                Objects.toString(rs.getString(5)),
                rs.getLong(6),
                Instant.ofEpochMilli(rs.getLong(7)).toString(),
                tree(rs.getString(8))));
      }
    }
    List<String> mismatches = new ArrayList<>();
    for (Map.Entry<String, JsonNode> run : runs.entrySet()) {
      List<Object> row = rows.get(run.getKey());
      JsonNode state = run.getValue();
      if (row == null) {
        mismatches.add(run.getKey() + ": no row");
        continue;
      }
      List<Object> expected =
          List.of(
              state.path("last_request_id").asText(),
              Instant.parse(state.path("last_created_at").asText()).toString(),
              state.path("last_type").isNull() ? "null" : state.path("last_type").asText(),
              state.path("applied_count").asLong(),
              Instant.parse(state.path("updated_at").asText()).toString(),
              state.path("data").isMissingNode() ? json.nullNode() : state.path("data"));
      if (!expected.equals(row)) {
        mismatches.add(run.getKey() + ": " + row + " (database) vs " + expected + " (sume.runs)");
      }
    }
    if (rows.size() != runs.size()) {
      mismatches.add(rows.size() + " rows in runs for " + runs.size() + " runs");
    }
    return mismatches;
  }

  private JsonNode tree(String text) {
    try {
      return text == null ? json.nullNode() : json.readTree(text);
    } catch (IOException e) {
      return json.getNodeFactory().textNode(text);
    }
  }

  private Map<String, Long> scrape(Pattern pattern) {
    Map<String, Long> out = new HashMap<>();
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create(target.adminUri() + "/metrics"))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      for (String line : response.body().split("\n")) {
        Matcher m = pattern.matcher(line);
        if (m.matches()) {
          out.merge(m.group(1), (long) Double.parseDouble(m.group(2)), Long::sum);
        }
      }
    } catch (IOException e) {
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return out;
  }
}
