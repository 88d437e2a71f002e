package dev.runlane.bench.load;

import dev.runlane.common.config.Secret;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.signature.SumeSignatureVerifier;
import java.time.Instant;
import java.util.Base64;
import java.util.SplittableRandom;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Signed Sume webhooks as a sender would make them: a JSON envelope with a unique request_id, one
 * of many run ids, and a random (incompressible) payload that brings the body to the wanted size.
 */
public final class Webhooks {
  public static final Secret SECRET = Secret.of("bench-signing-secret-0123456789abcdef");
  public static final String PATH = "/webhooks/sume";
  public static final String RUN_ID_HEADER = "X-Bench-Run-Id";
  public static final String REQUEST_ID_HEADER = "X-Bench-Request-Id";
  public static final String CREATED_AT_HEADER = "X-Bench-Created-At";

  /** The HTTP loads' bodies: 2 KB, signed, with an incompressible payload. */
  public static final int HTTP_BODY_BYTES = 2048;

  /** The HTTP loads' run ids: each request is for one of these many runs. */
  public static final int HTTP_RUNS = 100_000;

  /** One signed request. */
  public record Signed(
      String requestId,
      String runId,
      String createdAt,
      String eventId,
      long timestamp,
      String signature,
      byte[] body) {}

  private final SplittableRandom random;
  private final int runs;
  private final int bodyBytes;
  private final long idHigh;
  private final Instant t0 = Instant.now();
  private long next;

  /**
   * @param seed random seed (ids and payloads)
   * @param runs how many distinct run ids
   * @param bodyBytes the body size to aim for (at least ~300)
   */
  public Webhooks(long seed, int runs, int bodyBytes) {
    this.random = new SplittableRandom(seed);
    this.runs = runs;
    this.bodyBytes = bodyBytes;
    this.idHigh = random.nextLong();
  }

  /** The next webhook, with a new request_id, signed with the current time. */
  public Signed next() {
    long n = next++;
    String requestId = new UUID(idHigh, n).toString();
    String runId = "run-" + random.nextInt(runs);
    String createdAt = t0.plusMillis(n).toString();
    byte[] body = body(requestId, runId, createdAt, "run.updated", bodyBytes, random);
    long ts = Instant.now().getEpochSecond();
    return new Signed(
        requestId,
        runId,
        createdAt,
        "evt-" + n,
        ts,
        SumeSignatureVerifier.sign(SECRET, ts, body),
        body);
  }

  /** {@code n} fresh webhooks. */
  public Signed[] batch(int n) {
    Signed[] out = new Signed[n];
    for (int i = 0; i < n; i++) {
      out[i] = next();
    }
    return out;
  }

  /** A JSON envelope padded to about {@code size} bytes with base64 of random bytes. */
  /**
   * A record as the ingress writes it, produced straight into the processor's input: key = run id,
   * the body, and the request_id and received_at headers.
   */
  public static ProducerRecord<String, byte[]> record(
      String topic,
      String requestId,
      String runId,
      Instant createdAt,
      int bodyBytes,
      SplittableRandom random) {
    byte[] body = body(requestId, runId, createdAt.toString(), "run.updated", bodyBytes, random);
    var record = new ProducerRecord<>(topic, runId, body);
    RecordHeaders.put(record.headers(), RecordHeaders.REQUEST_ID, requestId);
    RecordHeaders.put(
        record.headers(), RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
    return record;
  }

  public static byte[] body(
      String requestId,
      String runId,
      String createdAt,
      String type,
      int size,
      SplittableRandom random) {
    // Random Base64 in the payload, so that a compressed batch is as large as a real one.
    return SumeEvents.event(runId, requestId, createdAt)
        .type(type)
        .data("status", "running")
        .paddedTo(
            size,
            "payload",
            room -> {
              byte[] raw = new byte[room * 3 / 4];
              random.nextBytes(raw);
              return Base64.getEncoder().withoutPadding().encodeToString(raw);
            })
        .bytes();
  }
}
