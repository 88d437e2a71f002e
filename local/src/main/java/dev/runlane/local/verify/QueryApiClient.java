package dev.runlane.local.verify;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A client of the processor's query API ({@code GET /runs/{id}}) that honours a 503's {@code
 * Retry-After}, the answer while a replay re-derives the run (D69).
 */
final class QueryApiClient {

  private final HttpClient http;
  private final URI processorUri;

  /** Sends with {@code http} to {@code processorUri}, e.g. {@code http://127.0.0.1:9081}. */
  QueryApiClient(HttpClient http, URI processorUri) {
    this.http = http;
    this.processorUri = processorUri;
  }

  /**
   * Asks for one run, again while the answer is a 503 with {@code Retry-After} (a replay still
   * re-deriving the run, D69), until {@code deadline} ({@link System#nanoTime()}).
   */
  HttpResponse<String> run(String runId, long deadline) throws IOException, InterruptedException {
    URI uri = processorUri.resolve("/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8));
    while (true) {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      var retryAfter = response.headers().firstValue("Retry-After");
      if (response.statusCode() != 503
          || retryAfter.isEmpty()
          || !retryAfter.get().matches("[0-9]{1,3}")
          || System.nanoTime() - deadline > 0) {
        return response;
      }
      // Waiting as the answer asks: the client side of the 503's contract, not a synchronization.
      Thread.sleep(Duration.ofSeconds(Long.parseLong(retryAfter.get())).toMillis());
    }
  }
}
