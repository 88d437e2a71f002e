package dev.runlane.common.signature;

import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;

/**
 * The Sume scheme: {@code X-Sume-Signature: v1=<hex>} with hex = HMAC-SHA256(secret as UTF-8,
 * "{@code <X-Sume-Timestamp>.<raw body>}").
 *
 * <p>The signature header may hold several comma-separated entries (secret rotation); entries of
 * other versions (e.g. {@code v0=}) are ignored. A request is accepted when any {@code v1}
 * signature matches any configured secret and the timestamp is within the tolerance, in either
 * direction, both ends included. {@code X-Sume-Event-Id} is not signed and not required.
 *
 * <p>Failure reasons: a missing/blank timestamp or signature header is {@code MISSING_HEADER}; a
 * timestamp that is not ASCII digits is {@code MALFORMED_TIMESTAMP}; the timestamp is checked
 * before the signature. A signature header with no well-formed {@code v1=} entry (64 hex digits) is
 * {@code MALFORMED_SIGNATURE} if some entry is malformed (not {@code version=value}, or bad hex),
 * and {@code NO_MATCHING_SIGNATURE} if it only holds other versions; well-formed {@code v1} entries
 * that do not match are {@code NO_MATCHING_SIGNATURE}.
 */
public final class SumeSignatureVerifier implements SignatureVerifier {

  public static final String SCHEME = "sume";
  public static final String EVENT_ID_HEADER = "X-Sume-Event-Id";
  public static final String TIMESTAMP_HEADER = "X-Sume-Timestamp";
  public static final String SIGNATURE_HEADER = "X-Sume-Signature";

  private static final List<String> HEADERS =
      List.of(EVENT_ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER);
  private static final int SIGNATURE_BYTES = 32;

  private final Hmac hmac;
  private final long toleranceSeconds;
  private final Clock clock;

  /**
   * @param secrets the signing secrets, newest first (at least one); used as UTF-8 bytes
   * @param tolerance how far the timestamp may be from now, either way (whole seconds)
   * @param clock the clock to check the timestamp against
   */
  public SumeSignatureVerifier(List<Secret> secrets, Duration tolerance, Clock clock) {
    this.hmac = new Hmac(secrets.stream().map(Secret::utf8).toList());
    this.toleranceSeconds = Hmac.toleranceSeconds(tolerance);
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Signs a body the way Sume does.
   *
   * @return the signature header value, {@code v1=<lower-case hex>}
   */
  public static String sign(Secret secret, long timestampSeconds, byte[] body) {
    Mac mac = Hmac.newMac(secret.utf8());
    mac.update(Long.toString(timestampSeconds).getBytes(StandardCharsets.US_ASCII));
    mac.update((byte) '.');
    mac.update(body);
    return "v1=" + Hmac.hex(mac.doFinal());
  }

  @Override
  public void verify(byte[] rawBody, HeaderLookup headers) throws SignatureException {
    Objects.requireNonNull(rawBody, "rawBody");
    String timestamp = Hmac.require(headers, TIMESTAMP_HEADER);
    String signature = Hmac.require(headers, SIGNATURE_HEADER);
    long ts = Hmac.parseTimestamp(timestamp, TIMESTAMP_HEADER);
    Hmac.checkFreshness(ts, clock, toleranceSeconds);
    byte[][] candidates = parseSignatures(signature);
    byte[] signedPrefix = Hmac.withDot(timestamp); // digits only, checked above
    if (hmac.anyMatches(candidates, signedPrefix, rawBody)) {
      return;
    }
    throw new SignatureException(
        Reason.NO_MATCHING_SIGNATURE,
        "no " + SIGNATURE_HEADER + " v1 signature matches a configured secret");
  }

  @Override
  public String scheme() {
    return SCHEME;
  }

  @Override
  public List<String> headerNames() {
    return HEADERS;
  }

  private static byte[][] parseSignatures(String header) throws SignatureException {
    if (header.length() == 67 && header.startsWith("v1=")) { // the usual single signature
      byte[] decoded = Hmac.unhex(header, 3, 67, SIGNATURE_BYTES);
      if (decoded != null) {
        return new byte[][] {decoded};
      }
    }
    List<byte[]> v1 = new ArrayList<>(2);
    boolean malformed = false;
    int n = header.length();
    int start = 0;
    while (start <= n) {
      int comma = header.indexOf(',', start);
      if (comma < 0) {
        comma = n;
      }
      int a = start;
      int b = comma;
      while (a < b && Character.isWhitespace(header.charAt(a))) {
        a++;
      }
      while (b > a && Character.isWhitespace(header.charAt(b - 1))) {
        b--;
      }
      if (a < b) {
        int eq = header.indexOf('=', a);
        if (eq <= a || eq >= b) {
          malformed = true;
        } else if (eq - a == 2 && header.startsWith("v1", a)) {
          byte[] decoded = Hmac.unhex(header, eq + 1, b, SIGNATURE_BYTES);
          if (decoded == null) {
            malformed = true;
          } else {
            v1.add(decoded);
          }
        }
      }
      start = comma + 1;
    }
    if (v1.isEmpty()) {
      if (malformed) {
        throw new SignatureException(
            Reason.MALFORMED_SIGNATURE,
            SIGNATURE_HEADER + " has no well-formed v1=<64 hex digits> signature");
      }
      throw new SignatureException(
          Reason.NO_MATCHING_SIGNATURE, SIGNATURE_HEADER + " has no v1 signature");
    }
    return v1.toArray(new byte[0][]);
  }
}
