package dev.runlane.bench.load;

import dev.runlane.common.kafka.RecordHeaders;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;

/**
 * The baseline of the ingress: the same HTTP server (Vert.x, one server per event loop, same number
 * of loops), the same producer settings and the same record (key, value, headers), but no
 * verification, no envelope parsing, no metrics, no deadline timer: read the body, send, answer 200
 * on the broker ack. The run id, request id and created_at come from headers the load generator
 * adds, so nothing is parsed.
 */
public final class BareHarness implements AutoCloseable {
  private static final Buffer OK = Buffer.buffer("{\"status\":\"accepted\"}");

  private final Vertx vertx;
  private final KafkaProducer<byte[], byte[]> producer;
  private final String topic;
  private final int port;

  public BareHarness(Map<String, Object> producerConfig, String topic, int eventLoops)
      throws Exception {
    this(producerConfig, topic, eventLoops, freePort());
  }

  /** On {@code port}: the cost stage's bare ingress, in a JVM of its own, listens where told. */
  public BareHarness(Map<String, Object> producerConfig, String topic, int eventLoops, int port)
      throws Exception {
    this.producer = new KafkaProducer<>(producerConfig);
    this.topic = topic;
    awaitMetadata(producer, topic);
    this.vertx =
        Vertx.vertx(
            new VertxOptions().setEventLoopPoolSize(eventLoops).setPreferNativeTransport(false));
    this.port = port;
    for (int i = 0; i < eventLoops; i++) {
      vertx
          .deployVerticle(
              ctx -> {
                HttpServer server =
                    vertx.createHttpServer(
                        new HttpServerOptions()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .setReuseAddress(true)
                            .setCompressionSupported(false)
                            // as the ingress's server
                            .setIdleTimeout(60)
                            .setIdleTimeoutUnit(TimeUnit.SECONDS));
                server.requestHandler(this::handle);
                return server.listen();
              })
          .await(30, TimeUnit.SECONDS);
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return probe.getLocalPort();
    }
  }

  /** Waits for the topic's metadata (max.block.ms is small), so send() never waits for it. */
  public static void awaitMetadata(KafkaProducer<?, ?> producer, String topic) {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      try {
        producer.partitionsFor(topic);
        return;
      } catch (TimeoutException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }

  public int port() {
    return port;
  }

  private void handle(HttpServerRequest request) {
    long receivedAt = System.currentTimeMillis();
    Context context = vertx.getOrCreateContext();
    request
        .body()
        .onSuccess(
            body -> {
              String runId = request.getHeader(Webhooks.RUN_ID_HEADER);
              ProducerRecord<byte[], byte[]> record =
                  new ProducerRecord<>(
                      topic,
                      null,
                      receivedAt,
                      runId.getBytes(StandardCharsets.UTF_8),
                      body.getBytes());
              Headers h = record.headers();
              RecordHeaders.put(
                  h, RecordHeaders.REQUEST_ID, request.getHeader(Webhooks.REQUEST_ID_HEADER));
              RecordHeaders.put(
                  h, RecordHeaders.CREATED_AT, request.getHeader(Webhooks.CREATED_AT_HEADER));
              RecordHeaders.put(h, RecordHeaders.RECEIVED_AT, Long.toString(receivedAt));
              RecordHeaders.put(h, RecordHeaders.SOURCE, "sume");
              for (String name :
                  new String[] {"X-Sume-Event-Id", "X-Sume-Timestamp", "X-Sume-Signature"}) {
                String v = request.getHeader(name);
                if (v != null) {
                  h.add(RecordHeaders.http(name), v.getBytes(StandardCharsets.UTF_8));
                }
              }
              try {
                producer.send(
                    record,
                    (md, err) ->
                        context.runOnContext(
                            v -> {
                              if (err == null) {
                                request
                                    .response()
                                    .putHeader("Content-Type", "application/json")
                                    .end(OK);
                              } else {
                                request.response().setStatusCode(503).end();
                              }
                            }));
              } catch (RuntimeException e) {
                request.response().setStatusCode(503).end();
              }
            });
  }

  @Override
  public void close() {
    try {
      vertx.close().await(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      // best effort
    }
    producer.close();
  }
}
