package dev.runlane.bench.stage;

import dev.runlane.bench.load.Webhooks;
import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException;
import dev.runlane.common.signature.SumeSignatureVerifier;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Signature verification on the ingress's code path ({@link SumeSignatureVerifier#verify} over the
 * raw body, headers read from a Vert.x {@link MultiMap} as the handler does) next to a bare,
 * pre-initialized {@link Mac} over the same bytes ("{@code <timestamp>.}" then the body).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class VerifyBenchmark {

  @Param({"256", "2048", "16384"})
  public int size;

  private SumeSignatureVerifier verifier;
  private MultiMap headers;
  private byte[] body;
  private byte[] prefix;
  private Mac mac;

  @Setup
  public void setUp() throws Exception {
    Secret secret = Secret.of("bench-signing-secret-0123456789abcdef");
    body =
        Webhooks.body(
            "9f1c2d3e-0000-4000-8000-000000000001",
            "run-42",
            "2026-11-29T10:00:00Z",
            "run.updated",
            size,
            new SplittableRandom(1));
    long ts = 1_796_000_000L;
    Clock clock = Clock.fixed(Instant.ofEpochSecond(ts), ZoneOffset.UTC);
    verifier = new SumeSignatureVerifier(List.of(secret), Duration.ofSeconds(300), clock);
    headers = HttpHeaders.headers();
    headers
        .add(HttpHeaders.CONTENT_TYPE, "application/json")
        .add("X-Sume-Event-Id", "evt-1")
        .add("X-Sume-Timestamp", Long.toString(ts))
        .add("X-Sume-Signature", SumeSignatureVerifier.sign(secret, ts, body));
    prefix = (ts + ".").getBytes(StandardCharsets.US_ASCII);
    mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret.utf8(), "HmacSHA256"));
    verifier.verify(body, headers::get); // fails fast if the setup is wrong
  }

  @Benchmark
  public Object verify() throws SignatureException {
    verifier.verify(body, headers::get);
    return verifier;
  }

  @Benchmark
  public byte[] rawMac() {
    mac.update(prefix);
    mac.update(body);
    return mac.doFinal();
  }
}
