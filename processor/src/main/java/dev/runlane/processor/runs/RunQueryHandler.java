package dev.runlane.processor.runs;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
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
 */
public final class RunQueryHandler implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(RunQueryHandler.class);
  private static final String PREFIX = "/runs/";

  private final Supplier<KafkaStreams> streams;
  private final String storeName;
  private final Supplier<HostInfo> self;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public RunQueryHandler(
      Supplier<KafkaStreams> streams, String storeName, Supplier<HostInfo> self) {
    this.streams = streams;
    this.storeName = storeName;
    this.self = self;
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
    KafkaStreams kafkaStreams = streams.get();
    if (kafkaStreams == null || !kafkaStreams.state().isRunningOrRebalancing()) {
      AdminServer.sendError(exchange, 503, "not_ready", "the processor is not running yet");
      return;
    }
    KeyQueryMetadata where =
        kafkaStreams.queryMetadataForKey(storeName, runId, Serdes.String().serializer());
    if (where == null || KeyQueryMetadata.NOT_AVAILABLE.equals(where)) {
      AdminServer.sendError(exchange, 503, "not_ready", "the run store is not available yet");
      return;
    }
    boolean hostedHere = where.activeHost().equals(self.get());
    if (localOnly && !hostedHere) {
      // Relayed here, but the group moved the run meanwhile: a later retry finds it.
      AdminServer.sendError(exchange, 503, "not_ready", "the run is moving between instances");
      return;
    }
    if (hostedHere) {
      byte[] json; // the run state as the processor wrote it
      try {
        ReadOnlyKeyValueStore<String, byte[]> store =
            kafkaStreams.store(
                StoreQueryParameters.fromNameAndType(
                    storeName, QueryableStoreTypes.<String, byte[]>keyValueStore()));
        json = store.get(runId);
      } catch (InvalidStateStoreException e) {
        // A rebalance or a replaced thread is restoring the store: the answer is "later", not 500.
        AdminServer.sendError(exchange, 503, "not_ready", "the run store is being restored");
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
      HttpResponse<byte[]> response =
          http.send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
              HttpResponse.BodyHandlers.ofByteArray());
      AdminServer.send(
          exchange,
          response.statusCode(),
          response.headers().firstValue("Content-Type").orElse(ErrorBody.CONTENT_TYPE),
          response.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      AdminServer.sendError(exchange, 503, "unavailable", "interrupted");
    } catch (IOException e) {
      log.warn("run query relay to {} failed for run_id={}: {}", host, runId, e.toString());
      AdminServer.sendError(
          exchange, 502, "bad_gateway", "the instance hosting this run did not answer");
    }
  }
}
