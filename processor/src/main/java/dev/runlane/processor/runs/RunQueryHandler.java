package dev.runlane.processor.runs;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.runlane.common.config.Secret;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.http.ErrorBody;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /runs/{run_id}}: the run's state from the run store, wherever in the group it lives.
 * When another instance hosts the key, the request is relayed to it once ({@code ?local=true} stops
 * a second hop while the group rebalances).
 *
 * <p>An answer never steps back (G3, D44): while a replay re-derives the run's partition, its store
 * may hold an older state than the one answered before, or none, so the answer is 503 {@code
 * re_deriving} until the new generation has caught up there (D69). Every 503 says when to ask again
 * ({@code Retry-After}).
 */
public final class RunQueryHandler implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(RunQueryHandler.class);
  private static final String PREFIX = "/runs/";

  /** Seconds a client waits before asking again after a 503: the catch-up is checked as often. */
  static final String RETRY_AFTER_SECONDS = "1";

  private static final String REDERIVING_MESSAGE =
      "a replay is re-deriving this run's state; its last committed state is answered again once"
          + " the new generation has re-derived past where the previous one stopped";

  private final Supplier<KafkaStreams> streams;
  private final String storeName;
  private final Supplier<HostInfo> self;
  private final Rederiving rederiving;
  private final Optional<String> authorization;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public RunQueryHandler(
      Supplier<KafkaStreams> streams,
      String storeName,
      Supplier<HostInfo> self,
      Rederiving rederiving,
      Optional<Secret> token) {
    this.streams = streams;
    this.storeName = storeName;
    this.self = self;
    this.rederiving = rederiving;
    // The peer guards its /runs with the same token (one Secret for the StatefulSet, D80).
    this.authorization = BearerGuard.header(token);
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (!"GET".equals(exchange.getRequestMethod())) {
      AdminServer.sendError(exchange, 405, "method_not_allowed", "use GET");
      return;
    }
    String path = exchange.getRequestURI().getRawPath();
    String runId = URLDecoder.decode(path.substring(PREFIX.length()), StandardCharsets.UTF_8);
    if (runId.isEmpty() || runId.contains("/")) {
      AdminServer.sendError(exchange, 404, "not_found", "use /runs/{run_id}");
      return;
    }
    boolean localOnly = "local=true".equals(exchange.getRequestURI().getRawQuery());
    answer(exchange, runId, localOnly);
  }

  private void answer(HttpExchange exchange, String runId, boolean localOnly) throws IOException {
    try {
      answerFrom(streams.get(), exchange, runId, localOnly);
    } catch (IllegalStateException e) {
      // The Streams client stopped between the state check and the query (a generation switch,
      // a shutdown): the answer is "later", never 500 for a run that may exist.
      unavailable(exchange, Rederiving.ANY, "the processor is switching its Streams client");
    }
  }

  private void answerFrom(
      KafkaStreams kafkaStreams, HttpExchange exchange, String runId, boolean localOnly)
      throws IOException {
    if (kafkaStreams == null || !kafkaStreams.state().isRunningOrRebalancing()) {
      unavailable(exchange, Rederiving.ANY, "the processor is not running yet");
      return;
    }
    KeyQueryMetadata where =
        kafkaStreams.queryMetadataForKey(storeName, runId, Serdes.String().serializer());
    if (where == null || KeyQueryMetadata.NOT_AVAILABLE.equals(where)) {
      unavailable(exchange, Rederiving.ANY, "the run store is not available yet");
      return;
    }
    boolean hostedHere = where.activeHost().equals(self.get());
    if (localOnly && !hostedHere) {
      // Relayed here, but the group moved the run meanwhile: a later retry finds it.
      unavailable(exchange, where.partition(), "the run is moving between instances");
      return;
    }
    if (hostedHere) {
      // Asked before the store is read: once the partition has caught up, the store's committed
      // view holds states at least as new as the previous generation's (D69).
      if (rederiving.on(where.partition())) {
        unavailable(exchange, where.partition(), "the run's state is being re-derived");
        return;
      }
      byte[] json; // the run state as the processor wrote it
      try {
        ReadOnlyKeyValueStore<String, byte[]> store =
            kafkaStreams.store(
                StoreQueryParameters.fromNameAndType(
                    storeName, QueryableStoreTypes.<String, byte[]>keyValueStore()));
        json = store.get(runId);
      } catch (InvalidStateStoreException e) {
        // A rebalance or a replaced thread is restoring the store: the answer is "later", not 500.
        unavailable(exchange, where.partition(), "the run store is being restored");
        return;
      }
      if (json == null) {
        AdminServer.sendError(exchange, 404, "not_found", "no state for this run");
      } else {
        AdminServer.send(exchange, 200, ErrorBody.CONTENT_TYPE, json);
      }
      return;
    }
    relay(exchange, where.activeHost(), runId);
  }

  /**
   * Answers 503 with {@code Retry-After}: {@code re_deriving} while a replay re-derives runs of
   * {@code partition}, else {@code not_ready} with {@code reason}.
   */
  private void unavailable(HttpExchange exchange, int partition, String reason) throws IOException {
    exchange.getResponseHeaders().set("Retry-After", RETRY_AFTER_SECONDS);
    if (rederiving.on(partition)) {
      AdminServer.sendError(exchange, 503, "re_deriving", REDERIVING_MESSAGE);
    } else {
      AdminServer.sendError(exchange, 503, "not_ready", reason);
    }
  }

  private void relay(HttpExchange exchange, HostInfo host, String runId) throws IOException {
    URI uri =
        URI.create(
            "http://"
                + host.host()
                + ":"
                + host.port()
                + PREFIX
                + URLEncoder.encode(runId, StandardCharsets.UTF_8)
                + "?local=true");
    try {
      HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5));
      authorization.ifPresent(a -> request.header("Authorization", a));
      HttpResponse<byte[]> response =
          http.send(request.GET().build(), HttpResponse.BodyHandlers.ofByteArray());
      response
          .headers()
          .firstValue("Retry-After")
          .ifPresent(v -> exchange.getResponseHeaders().set("Retry-After", v));
      AdminServer.send(
          exchange,
          response.statusCode(),
          response.headers().firstValue("Content-Type").orElse(ErrorBody.CONTENT_TYPE),
          response.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exchange.getResponseHeaders().set("Retry-After", RETRY_AFTER_SECONDS);
      AdminServer.sendError(exchange, 503, "unavailable", "interrupted");
    } catch (IOException e) {
      log.warn("run query relay to {} failed for run_id={}: {}", host, runId, e.toString());
      AdminServer.sendError(
          exchange, 502, "bad_gateway", "the instance hosting this run did not answer");
    }
  }
}
