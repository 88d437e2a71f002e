package dev.runlane.ingress;

import static dev.runlane.ingress.Fixtures.OLD_SECRET;
import static dev.runlane.ingress.Fixtures.SECRET;
import static dev.runlane.ingress.Fixtures.body;
import static dev.runlane.ingress.Fixtures.header;
import static dev.runlane.ingress.Fixtures.newId;
import static dev.runlane.ingress.Fixtures.readAll;
import static dev.runlane.ingress.Fixtures.send;
import static dev.runlane.ingress.Fixtures.signed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.config.Secret;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.common.signature.StandardWebhooksVerifier;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.ingress.http.IngressMeters;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@RealInfra
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebhookIngressIT {

  private static final Secret STANDARD_SECRET =
      Secret.of("whsec_" + Base64.getEncoder().encodeToString("standard-key-0123".getBytes()));

  private String bootstrap;
  private IngressConfig config;
  private PrometheusMeterRegistry registry;
  private IngressApp app;
  private URI uri;
  private final HttpClient client = Fixtures.httpClient();

  @BeforeAll
  void start(Infra infra) {
    bootstrap = infra.bootstrapServers();
    Map<String, String> env = Fixtures.env(bootstrap, infra.uniqueName("ingress-it"));
    env.put("STANDARD_WEBHOOKS_SECRETS", STANDARD_SECRET.reveal());
    config = Fixtures.config(env);
    registry = Metrics.newRegistry("ingress");
    app = IngressApp.start(config, registry);
    uri = Fixtures.sumeUri(app);
  }

  @AfterAll
  void stop() {
    if (app != null) {
      app.close();
    }
    registry.close();
  }

  @Test
  void signedRequestIsAcceptedAfterOneRecordIsWritten() {
    String requestId = newId("req");
    String runId = newId("run");
    byte[] sent = body(requestId, runId);
    long before = System.currentTimeMillis();

    HttpResponse<String> response = send(client, signed(uri, sent));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body())
        .isEqualTo("{\"status\":\"accepted\",\"request_id\":\"" + requestId + "\"}");
    List<ConsumerRecord<byte[], byte[]>> records = recordsOf(config.topics().webhooks(), requestId);
    assertThat(records).hasSize(1);
    ConsumerRecord<byte[], byte[]> r = records.get(0);
    assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo(runId);
    assertThat(r.value()).isEqualTo(sent);
    assertThat(header(r, RecordHeaders.CREATED_AT)).isNotBlank();
    assertThat(Instant.parse(header(r, RecordHeaders.CREATED_AT))).isBefore(Instant.now());
    assertThat(header(r, RecordHeaders.SOURCE)).isEqualTo("sume");
    long receivedAt = Long.parseLong(header(r, RecordHeaders.RECEIVED_AT));
    assertThat(r.timestamp()).isEqualTo(receivedAt).isBetween(before, System.currentTimeMillis());
    assertThat(header(r, "http.x-sume-signature")).startsWith("v1=");
    assertThat(header(r, "http.x-sume-timestamp")).isNotBlank();
    assertThat(header(r, "http.x-sume-event-id")).startsWith("evt-");
  }

  static Stream<Arguments> badSignatures() {
    Secret unknown = Secret.of("not-a-configured-secret");
    return Stream.of(
        Arguments.of(
            "wrong signature",
            (UnaryOperator<Req>) r -> r.with("X-Sume-Signature", "v1=" + "ab".repeat(32)),
            "no_matching_signature"),
        Arguments.of(
            "missing signature header",
            (UnaryOperator<Req>) r -> r.without("X-Sume-Signature"),
            "missing_header"),
        Arguments.of(
            "missing timestamp header",
            (UnaryOperator<Req>) r -> r.without("X-Sume-Timestamp"),
            "missing_header"),
        Arguments.of(
            "timestamp too old",
            (UnaryOperator<Req>) r -> r.signedAt(now() - 330, SECRET),
            "timestamp_too_old"),
        Arguments.of(
            "timestamp too new",
            (UnaryOperator<Req>) r -> r.signedAt(now() + 330, SECRET),
            "timestamp_too_new"),
        Arguments.of(
            "secret removed by rotation",
            (UnaryOperator<Req>) r -> r.signedAt(now(), unknown),
            "no_matching_signature"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSignatures")
  void badSignatureIsRejectedCountedAndNotWritten(
      String name, UnaryOperator<Req> tamper, String reason) {
    String requestId = newId("bad");
    Req req = tamper.apply(Req.signed(body(requestId, newId("run"))));
    double counted = requests("sume", reason);

    HttpResponse<String> response = send(client, req.build(uri));

    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(response.body()).startsWith("{\"error\":\"" + reason + "\",\"message\":");
    assertThat(requests("sume", reason)).isEqualTo(counted + 1);
    assertThat(recordsOf(config.topics().webhooks(), requestId)).isEmpty();
    assertThat(recordsOf(config.topics().dlq(), requestId)).isEmpty();
  }

  @Test
  void olderSecretStillVerifiesDuringRotation() {
    String requestId = newId("rot");
    byte[] sent = body(requestId, newId("run"));
    HttpResponse<String> response =
        send(client, signed(uri, sent, OLD_SECRET, Instant.now().getEpochSecond()));
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(recordsOf(config.topics().webhooks(), requestId)).hasSize(1);
  }

  @Test
  void declaredTwoMebibyteBodyIsRejectedBeforeItIsSent() throws IOException {
    double counted = requests("sume", "too_large");
    try (Socket socket = new Socket("127.0.0.1", app.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /webhooks/sume HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  + "Content-Length: "
                  + 2 * 1024 * 1024
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String response = readResponse(socket.getInputStream());
      assertThat(response).startsWith("HTTP/1.1 413 ");
      assertThat(response).contains("{\"error\":\"too_large\"");
    }
    assertThat(requests("sume", "too_large")).isEqualTo(counted + 1);
  }

  @Test
  void streamedBodyOverTheLimitIsRejected() throws IOException {
    try (Socket socket = new Socket("127.0.0.1", app.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /webhooks/sume HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  + "Transfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[64 * 1024];
      int chunks = config.maxBodyBytes() / chunk.length + 1; // just over the limit
      for (int i = 0; i < chunks; i++) {
        out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(chunk);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      }
      out.flush();
      String response = readResponse(socket.getInputStream());
      assertThat(response).startsWith("HTTP/1.1 413 ");
      assertThat(response).containsIgnoringCase("connection: close");
    }
  }

  @Test
  void twoMebibyteBodyFromAnHttpClientIsRefusedWithoutReadingIt() throws Exception {
    double counted = requests("sume", "too_large");
    byte[] big = body(newId("big"), newId("run"), 2 * 1024 * 1024);
    try {
      HttpResponse<String> response =
          client.send(signed(uri, big), HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(413);
    } catch (IOException e) {
      // The server answers 413 and closes without reading the rest; a client still writing the
      // body may see the closed connection (broken pipe) before it reads that answer. Either way
      // it is not a 2xx, which is what matters to Sume; the raw-socket tests read the 413 itself.
      java.io.StringWriter trace = new java.io.StringWriter();
      e.printStackTrace(new java.io.PrintWriter(trace));
      assertThat(trace.toString())
          .as("the connection was closed by the server, not some other failure")
          .containsAnyOf("Broken pipe", "Connection reset", "received no bytes", "closed");
    }
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(requests("sume", "too_large")).isEqualTo(counted + 1));
  }

  @Test
  void nonJsonContentTypeIsUnsupported() {
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "text/plain")
            .POST(HttpRequest.BodyPublishers.ofString("hello"))
            .build();
    HttpResponse<String> response = send(client, request);
    assertThat(response.statusCode()).isEqualTo(415);
    assertThat(response.body()).startsWith("{\"error\":\"unsupported_media_type\"");
  }

  @Test
  void signedBodyThatIsNotJsonIsDeadLettered() {
    byte[] sent = "this is not json".getBytes(StandardCharsets.UTF_8);
    double counted = requests("sume", "dead_lettered");
    HttpResponse<String> response = send(client, signed(uri, sent));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("{\"status\":\"dead_lettered\",\"reason\":\"not_json\"}");
    List<ConsumerRecord<byte[], byte[]>> dlq =
        readAll(bootstrap, config.topics().dlq()).stream()
            .filter(r -> java.util.Arrays.equals(r.value(), sent))
            .toList();
    assertThat(dlq).hasSize(1);
    assertThat(header(dlq.get(0), RecordHeaders.DLQ_REASON)).isEqualTo("not_json");
    assertThat(header(dlq.get(0), RecordHeaders.DLQ_DETAIL)).isNotBlank();
    assertThat(header(dlq.get(0), "http.x-sume-signature")).startsWith("v1=");
    assertThat(requests("sume", "dead_lettered")).isEqualTo(counted + 1);
  }

  @Test
  void signedBodyWithoutRequestIdIsDeadLettered() {
    String marker = newId("marker");
    byte[] sent =
        ("{\"created_at\":\"2026-01-01T00:00:00Z\",\"data\":{\"run_id\":\"" + marker + "\"}}")
            .getBytes(StandardCharsets.UTF_8);
    HttpResponse<String> response = send(client, signed(uri, sent));

    assertThat(response.statusCode()).isEqualTo(200);
    List<ConsumerRecord<byte[], byte[]>> dlq =
        readAll(bootstrap, config.topics().dlq()).stream()
            .filter(r -> new String(r.value(), StandardCharsets.UTF_8).contains(marker))
            .toList();
    assertThat(dlq).hasSize(1);
    assertThat(header(dlq.get(0), RecordHeaders.DLQ_REASON)).isEqualTo("missing_field");
    assertThat(dlq.get(0).value()).isEqualTo(sent);
    assertThat(
            readAll(bootstrap, config.topics().webhooks()).stream()
                .filter(r -> new String(r.value(), StandardCharsets.UTF_8).contains(marker)))
        .isEmpty();
  }

  /**
   * A signed body whose request id, run id (at either pointer) or type PostgreSQL could not store,
   * each written by hand: U+0000 as its JSON escape, or a request id over the bound in bytes (in
   * fewer characters than the bound, most of them two-byte). {@code %s} is a unique marker, so that
   * the case finds its record.
   */
  static Stream<Arguments> unstorableFields() {
    String at = "\"created_at\":\"" + Instant.now() + "\"";
    String over = "é".repeat(EnvelopeParser.MAX_FIELD_BYTES / 2) + "x";
    return Stream.of(
        Arguments.of(
            "request_id with NUL",
            "{\"request_id\":\"%s\\u0000\"," + at + ",\"data\":{\"run_id\":\"run-1\"}}"),
        Arguments.of(
            "/data/run_id with NUL",
            "{\"request_id\":\"%s\"," + at + ",\"data\":{\"run_id\":\"run\\u0000x\"}}"),
        Arguments.of(
            "/run_id with NUL", "{\"request_id\":\"%s\"," + at + ",\"run_id\":\"run\\u0000x\"}"),
        Arguments.of(
            "type with NUL",
            "{\"request_id\":\"%s\","
                + at
                + ",\"type\":\"run.x\\u0000y\",\"data\":{\"run_id\":\"run-1\"}}"),
        Arguments.of(
            "request_id over the bound",
            "{\"request_id\":\"%s" + over + "\"," + at + ",\"data\":{\"run_id\":\"run-1\"}}"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unstorableFields")
  void signedBodyWithAnUnstorableFieldIsDeadLettered(String name, String template) {
    String marker = newId("unstorable");
    byte[] sent = String.format(template, marker).getBytes(StandardCharsets.UTF_8);
    double counted = requests("sume", "dead_lettered");

    HttpResponse<String> response = send(client, signed(uri, sent));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body())
        .isEqualTo("{\"status\":\"dead_lettered\",\"reason\":\"unstorable_field\"}");
    List<ConsumerRecord<byte[], byte[]>> dlq =
        readAll(bootstrap, config.topics().dlq()).stream()
            .filter(r -> new String(r.value(), StandardCharsets.UTF_8).contains(marker))
            .toList();
    assertThat(dlq).hasSize(1);
    assertThat(dlq.get(0).value()).isEqualTo(sent);
    assertThat(header(dlq.get(0), RecordHeaders.DLQ_REASON)).isEqualTo("unstorable_field");
    assertThat(header(dlq.get(0), RecordHeaders.DLQ_DETAIL)).isNotBlank().doesNotContain("\0");
    assertThat(requests("sume", "dead_lettered")).isEqualTo(counted + 1);
    assertThat(
            readAll(bootstrap, config.topics().webhooks()).stream()
                .filter(r -> new String(r.value(), StandardCharsets.UTF_8).contains(marker)))
        .isEmpty();
  }

  @Test
  void otherPathsAndMethodsAreNotFoundOrNotAllowed() {
    HttpResponse<String> notFound =
        send(
            client,
            HttpRequest.newBuilder(uri.resolve("/webhooks/other"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build());
    assertThat(notFound.statusCode()).isEqualTo(404);
    assertThat(notFound.body()).startsWith("{\"error\":\"not_found\"");

    HttpResponse<String> trailingSlash =
        send(
            client,
            HttpRequest.newBuilder(URI.create(uri + "/"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build());
    assertThat(trailingSlash.statusCode()).isEqualTo(404);

    HttpResponse<String> get = send(client, HttpRequest.newBuilder(uri).GET().build());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(get.headers().firstValue("Allow")).hasValue("POST");
    assertThat(get.body()).startsWith("{\"error\":\"method_not_allowed\"");
  }

  @Test
  void fiveHundredConcurrentRequestsAreAllWrittenOnce() {
    HttpClient concurrent = Fixtures.httpClient();
    Set<String> ids = new HashSet<>();
    List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
    IntStream.range(0, 500)
        .forEach(
            i -> {
              String requestId = newId("conc-" + i);
              ids.add(requestId);
              responses.add(
                  concurrent.sendAsync(
                      signed(uri, body(requestId, "run-" + (i % 37))),
                      HttpResponse.BodyHandlers.ofString()));
            });
    CompletableFuture.allOf(responses.toArray(CompletableFuture[]::new)).join();

    assertThat(responses).allSatisfy(f -> assertThat(f.join().statusCode()).isEqualTo(200));
    List<String> written =
        readAll(bootstrap, config.topics().webhooks()).stream()
            .map(r -> header(r, RecordHeaders.REQUEST_ID))
            .filter(ids::contains)
            .toList();
    assertThat(written).hasSize(500).doesNotHaveDuplicates();
  }

  @Test
  void standardWebhooksSourceIsServedOnItsOwnRoute() {
    String requestId = newId("std");
    byte[] sent = body(requestId, newId("run"));
    long ts = Instant.now().getEpochSecond();
    String id = "msg_" + requestId;
    HttpRequest request =
        HttpRequest.newBuilder(uri.resolve("/webhooks/standard"))
            .header("Content-Type", "application/json")
            .header(StandardWebhooksVerifier.ID_HEADER, id)
            .header(StandardWebhooksVerifier.TIMESTAMP_HEADER, Long.toString(ts))
            .header(
                StandardWebhooksVerifier.SIGNATURE_HEADER,
                StandardWebhooksVerifier.sign(STANDARD_SECRET, id, ts, sent))
            .POST(HttpRequest.BodyPublishers.ofByteArray(sent))
            .build();

    assertThat(send(client, request).statusCode()).isEqualTo(200);
    List<ConsumerRecord<byte[], byte[]>> records = recordsOf(config.topics().webhooks(), requestId);
    assertThat(records).hasSize(1);
    assertThat(header(records.get(0), RecordHeaders.SOURCE)).isEqualTo("standard");
    assertThat(header(records.get(0), "http.webhook-id")).isEqualTo(id);

    // A Sume signature on the standard route does not verify.
    HttpRequest sumeSigned = signed(uri.resolve("/webhooks/standard"), sent);
    assertThat(send(client, sumeSigned).statusCode()).isEqualTo(401);
  }

  @Test
  void adminPortServesHealthAndMetrics() {
    URI admin = URI.create("http://127.0.0.1:" + app.adminPort());
    assertThat(
            send(client, HttpRequest.newBuilder(admin.resolve("/health/live")).build())
                .statusCode())
        .isEqualTo(200);
    assertThat(
            send(client, HttpRequest.newBuilder(admin.resolve("/health/ready")).build())
                .statusCode())
        .isEqualTo(200);
    send(client, signed(uri, body(newId("m"), newId("run"))));
    String metrics = send(client, HttpRequest.newBuilder(admin.resolve("/metrics")).build()).body();
    assertThat(metrics)
        .contains("runlane_ingress_requests_total{outcome=\"accepted\"")
        .contains("runlane_ingress_requests_total{outcome=\"timestamp_too_old\"")
        .contains("runlane_ingress_ack_latency_seconds")
        .contains("kafka_producer_")
        .contains("jvm_memory_used_bytes");
  }

  private static long now() {
    return Instant.now().getEpochSecond();
  }

  /** The requests counted with this source and outcome; 0 before the first. */
  private double requests(String source, String outcome) {
    var counter =
        registry.find(IngressMeters.REQUESTS).tags("source", source, "outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  private List<ConsumerRecord<byte[], byte[]>> recordsOf(String topic, String requestId) {
    return readAll(bootstrap, topic).stream()
        .filter(r -> requestId.equals(header(r, RecordHeaders.REQUEST_ID)))
        .toList();
  }

  /** Reads one HTTP/1.1 response (headers and a Content-Length body) from a raw socket. */
  private static String readResponse(InputStream in) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != -1) {
      buf.write(b);
      String s = buf.toString(StandardCharsets.US_ASCII);
      int end = s.indexOf("\r\n\r\n");
      if (end >= 0) {
        int length = 0;
        for (String line : s.substring(0, end).split("\r\n")) {
          if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
            length = Integer.parseInt(line.substring(15).trim());
          }
        }
        byte[] body = in.readNBytes(length);
        return s + new String(body, StandardCharsets.UTF_8);
      }
    }
    return buf.toString(StandardCharsets.US_ASCII);
  }

  /** A signed request under construction, for tampering. */
  record Req(byte[] body, Map<String, String> headers) {

    static Req signed(byte[] body) {
      long ts = Instant.now().getEpochSecond();
      return new Req(
          body,
          Map.of(
              SumeSignatureVerifier.EVENT_ID_HEADER, "evt-1",
              SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(ts),
              SumeSignatureVerifier.SIGNATURE_HEADER,
                  SumeSignatureVerifier.sign(SECRET, ts, body)));
    }

    Req with(String name, String value) {
      Map<String, String> h = new java.util.HashMap<>(headers);
      h.put(name, value);
      return new Req(body, h);
    }

    Req without(String name) {
      Map<String, String> h = new java.util.HashMap<>(headers);
      h.remove(name);
      return new Req(body, h);
    }

    Req signedAt(long ts, Secret secret) {
      return with(SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(ts))
          .with(
              SumeSignatureVerifier.SIGNATURE_HEADER, SumeSignatureVerifier.sign(secret, ts, body));
    }

    HttpRequest build(URI uri) {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(uri)
              .timeout(Duration.ofSeconds(20))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofByteArray(body));
      headers.forEach(b::header);
      return b.build();
    }
  }
}
