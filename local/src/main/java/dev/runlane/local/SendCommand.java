package dev.runlane.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SumeSignatureVerifier;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code runlane send}: one signed webhook, as Sume would send it. */
@Command(
    name = "send",
    mixinStandardHelpOptions = true,
    description = "Signs and POSTs one Sume webhook and prints the answer (exit 0 on 2xx).")
final class SendCommand implements Callable<Integer> {

  @Option(names = "--run", required = true, description = "The run id (data.run_id).")
  String run;

  @Option(names = "--type", required = true, description = "The event type, e.g. run.started.")
  String type;

  @Option(
      names = "--created-at",
      description = "RFC 3339 time with offset (default: now), the order key.")
  OffsetDateTime createdAt;

  @Option(names = "--request-id", description = "The dedup key (default: a new one).")
  String requestId;

  @Option(
      names = "--data",
      defaultValue = "{}",
      description = "A JSON object merged into data (run_id is set from --run).")
  String data;

  @Option(
      names = "--url",
      defaultValue = "http://127.0.0.1:8080/webhooks/sume",
      description = "The webhook endpoint.")
  URI url;

  @Option(
      names = "--secret",
      defaultValue = "${env:RUNLANE_SECRET}",
      description = "The signing secret (default: $RUNLANE_SECRET); `up` prints it.")
  String secret;

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (secret == null || secret.isBlank()) {
      System.err.println("no signing secret: pass --secret (printed by ./runlane up)");
      return 2;
    }
    ObjectMapper json = new ObjectMapper();
    JsonNode extra = json.readTree(data);
    if (!extra.isObject()) {
      System.err.println("--data must be a JSON object");
      return 2;
    }
    String id = requestId != null ? requestId : "req_" + UUID.randomUUID();
    OffsetDateTime at = createdAt != null ? createdAt : OffsetDateTime.now(ZoneOffset.UTC);
    ObjectNode body = json.createObjectNode();
    body.put("request_id", id);
    // ISO_OFFSET_DATE_TIME always writes seconds; OffsetDateTime.toString drops ":00", which
    // RFC 3339 (and so the envelope parser) does not allow.
    body.put("created_at", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(at));
    body.put("type", type);
    ObjectNode dataNode = body.putObject("data");
    dataNode.setAll((ObjectNode) extra);
    dataNode.put("run_id", run);
    byte[] raw = json.writeValueAsBytes(body);

    long ts = System.currentTimeMillis() / 1000;
    HttpRequest request =
        HttpRequest.newBuilder(url)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .header(SumeSignatureVerifier.EVENT_ID_HEADER, "evt_" + UUID.randomUUID())
            .header(SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(ts))
            .header(
                SumeSignatureVerifier.SIGNATURE_HEADER,
                SumeSignatureVerifier.sign(Secret.of(secret), ts, raw))
            .POST(HttpRequest.BodyPublishers.ofByteArray(raw))
            .build();
    HttpClient client =
        HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      System.err.println("POST " + url + " failed: " + e);
      return 1;
    }
    System.out.println("sent " + new String(raw, StandardCharsets.UTF_8));
    System.out.println("HTTP " + response.statusCode() + " " + response.body());
    // A signed but unusable body is answered 2xx (it is in the DLQ): still a failure for a user.
    boolean accepted =
        response.statusCode() / 100 == 2 && !response.body().contains("\"dead_lettered\"");
    return accepted ? 0 : 1;
  }
}
