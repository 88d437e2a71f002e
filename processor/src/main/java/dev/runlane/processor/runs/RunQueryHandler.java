package dev.runlane.processor.runs;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.runlane.common.http.ErrorBody;
import java.io.IOException;
import java.io.OutputStream;
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
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())) {
        send(exchange, 405, ErrorBody.json("method_not_allowed", "use GET"));
        return;
      }
      String path = exchange.getRequestURI().getRawPath();
      String runId = URLDecoder.decode(path.substring(PREFIX.length()), StandardCharsets.UTF_8);
      if (runId.isEmpty() || runId.contains("/")) {
        send(exchange, 404, ErrorBody.json("not_found", "use /runs/{run_id}"));
        return;
      }
      boolean localOnly = "local=true".equals(exchange.getRequestURI().getRawQuery());
      answer(exchange, runId, localOnly);
    }
  }

  private void answer(HttpExchange exchange, String runId, boolean localOnly) throws IOException {
    KafkaStreams kafkaStreams = streams.get();
    if (kafkaStreams == null || !kafkaStreams.state().isRunningOrRebalancing()) {
      send(exchange, 503, ErrorBody.json("not_ready", "the processor is not running yet"));
      return;
    }
    KeyQueryMetadata where =
        kafkaStreams.queryMetadataForKey(storeName, runId, Serdes.String().serializer());
    if (where == null || KeyQueryMetadata.NOT_AVAILABLE.equals(where)) {
      send(exchange, 503, ErrorBody.json("not_ready", "the run store is not available yet"));
      return;
    }
    if (where.activeHost().equals(self.get()) || localOnly) {
      ReadOnlyKeyValueStore<String, RunState> store;
      try {
        store =
            kafkaStreams.store(
                StoreQueryParameters.fromNameAndType(
                    storeName, QueryableStoreTypes.<String, RunState>keyValueStore()));
      } catch (RuntimeException e) {
        send(exchange, 503, ErrorBody.json("not_ready", "the run store is migrating"));
        return;
      }
      RunState state = store.get(runId);
      if (state == null) {
        send(exchange, 404, ErrorBody.json("not_found", "no state for this run"));
      } else {
        send(exchange, 200, RunStateSerde.toJson(state));
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
      send(exchange, response.statusCode(), response.body());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      send(exchange, 503, ErrorBody.json("unavailable", "interrupted"));
    } catch (IOException e) {
      log.warn("run query relay to {} failed for run_id={}: {}", host, runId, e.toString());
      send(
          exchange,
          502,
          ErrorBody.json("bad_gateway", "the instance hosting this run did not answer"));
    }
  }

  private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
