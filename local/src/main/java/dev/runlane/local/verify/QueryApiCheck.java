package dev.runlane.local.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The query API agrees with {@code sume.runs}: each run's {@code GET /runs/{id}} answers the last
 * request id, its created_at and the applied count the topic holds.
 */
final class QueryApiCheck {

  private static final List<String> FIELDS =
      List.of("last_request_id", "last_created_at", "applied_count");

  private final QueryApiClient api;
  private final ObjectMapper json = new ObjectMapper();

  QueryApiCheck(QueryApiClient api) {
    this.api = api;
  }

  /** Queries every run of {@code runs}, retrying a replay's 503 until {@code settleTimeout}. */
  Check check(Map<String, JsonNode> runs, Duration settleTimeout) {
    long deadline = System.nanoTime() + settleTimeout.toNanos();
    List<String> mismatches = new ArrayList<>();
    for (Map.Entry<String, JsonNode> run : runs.entrySet()) {
      try {
        HttpResponse<String> response = api.run(run.getKey(), deadline);
        if (response.statusCode() != 200) {
          mismatches.add(run.getKey() + ": HTTP " + response.statusCode());
          continue;
        }
        String mismatch =
            firstMismatch(run.getKey(), json.readTree(response.body()), run.getValue());
        if (mismatch != null) {
          mismatches.add(mismatch);
        }
      } catch (IOException e) {
        mismatches.add(run.getKey() + ": " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        mismatches.add(run.getKey() + ": interrupted");
        break;
      }
    }
    return Check.of("query API agrees with sume.runs", mismatches, runs.size() + " runs queried");
  }

  /** The first field on which the API's answer and the topic's state differ, or null. */
  private static String firstMismatch(String runId, JsonNode api, JsonNode topic) {
    for (String field : FIELDS) {
      if (!api.path(field).asText().equals(topic.path(field).asText())) {
        return runId
            + ": "
            + field
            + " "
            + api.path(field).asText()
            + " (API) vs "
            + topic.path(field).asText()
            + " (sume.runs)";
      }
    }
    return null;
  }
}
