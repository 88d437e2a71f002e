package dev.runlane.common.signature;

import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;

/**
 * The <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> scheme: {@code
 * webhook-signature: v1,<base64>} (space-separated, several allowed) with the signature =
 * HMAC-SHA256(key, "{@code <webhook-id>.<webhook-timestamp>.<raw body>}").
 *
 * <p>Secrets are {@code whsec_<base64>}; the key is the base64-decoded part (a secret without the
 * prefix is read as base64 too). The failure reasons follow {@link SumeSignatureVerifier}: all
 * three headers are required ({@code MISSING_HEADER}); entries of other versions (e.g. {@code v2,})
 * are ignored; a {@code v1} entry that is not base64 of 32 bytes is malformed.
 */
public final class StandardWebhooksVerifier implements SignatureVerifier {

  public static final String SCHEME = "standard-webhooks";
  public static final String ID_HEADER = "webhook-id";
  public static final String TIMESTAMP_HEADER = "webhook-timestamp";
  public static final String SIGNATURE_HEADER = "webhook-signature";
  public static final String SECRET_PREFIX = "whsec_";

  private static final List<String> HEADERS =
      List.of(ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER);
  private static final int SIGNATURE_BYTES = 32;

  private final Hmac hmac;
  private final long toleranceSeconds;
  private final Clock clock;

  /**
   * @param secrets the secrets, newest first (at least one), {@code whsec_<base64>} or plain base64
   * @param tolerance how far the timestamp may be from now, either way (whole seconds)
   * @param clock the clock to check the timestamp against
   * @throws IllegalArgumentException if a secret is not base64 (the message gives its position,
   *     never its value)
   */
  public StandardWebhooksVerifier(List<Secret> secrets, Duration tolerance, Clock clock) {
    List<byte[]> keys = new ArrayList<>(secrets.size());
    for (int i = 0; i < secrets.size(); i++) {
      keys.add(key(secrets.get(i), i + 1));
    }
    this.hmac = new Hmac(keys);
    this.toleranceSeconds = Hmac.toleranceSeconds(tolerance);
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Signs a message the Standard Webhooks way.
   *
   * @return the signature header value, {@code v1,<base64>}
   */
  public static String sign(Secret secret, String id, long ts, byte[] body) {
    Mac mac = Hmac.newMac(key(secret, 1));
    mac.update(id.getBytes(StandardCharsets.UTF_8));
    mac.update((byte) '.');
    mac.update(Long.toString(ts).getBytes(StandardCharsets.US_ASCII));
    mac.update((byte) '.');
    mac.update(body);
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal());
  }

  @Override
  public void verify(byte[] rawBody, HeaderLookup headers) throws SignatureException {
    Objects.requireNonNull(rawBody, "rawBody");
    String id = Hmac.require(headers, ID_HEADER);
    String timestamp = Hmac.require(headers, TIMESTAMP_HEADER);
    String signature = Hmac.require(headers, SIGNATURE_HEADER);
    long ts = Hmac.parseTimestamp(timestamp, TIMESTAMP_HEADER);
    Hmac.checkFreshness(ts, clock, toleranceSeconds);
    byte[][] candidates = parseSignatures(signature);
    byte[] signedPrefix = (id + '.' + timestamp + '.').getBytes(StandardCharsets.UTF_8);
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

  private static byte[] key(Secret secret, int position) {
    String value = secret.reveal();
    if (value.startsWith(SECRET_PREFIX)) {
      value = value.substring(SECRET_PREFIX.length());
    }
    byte[] key;
    try {
      key = Base64.getDecoder().decode(value);
    } catch (IllegalArgumentException e) {
      // Not chained: the decoder's message may quote a character of the secret.
      throw new IllegalArgumentException(
          "secret #" + position + " is not " + SECRET_PREFIX + "<base64> nor base64");
    }
    if (key.length == 0) {
      throw new IllegalArgumentException("secret #" + position + " is empty after decoding");
    }
    return key;
  }

  private static byte[][] parseSignatures(String header) throws SignatureException {
    List<byte[]> v1 = new ArrayList<>(2);
    boolean malformed = false;
    int n = header.length();
    int i = 0;
    while (i < n) {
      while (i < n && Character.isWhitespace(header.charAt(i))) {
        i++;
      }
      int start = i;
      while (i < n && !Character.isWhitespace(header.charAt(i))) {
        i++;
      }
      if (start == i) {
        break;
      }
      int comma = header.indexOf(',', start);
      if (comma <= start || comma >= i) {
        malformed = true;
      } else if (comma - start == 2 && header.startsWith("v1", start)) {
        byte[] decoded = decode(header.substring(comma + 1, i));
        if (decoded == null) {
          malformed = true;
        } else {
          v1.add(decoded);
        }
      }
    }
    if (v1.isEmpty()) {
      if (malformed) {
        throw new SignatureException(
            Reason.MALFORMED_SIGNATURE,
            SIGNATURE_HEADER + " has no well-formed v1,<base64 of 32 bytes> signature");
      }
      throw new SignatureException(
          Reason.NO_MATCHING_SIGNATURE, SIGNATURE_HEADER + " has no v1 signature");
    }
    return v1.toArray(new byte[0][]);
  }

  private static byte[] decode(String base64) {
    try {
      byte[] decoded = Base64.getDecoder().decode(base64);
      return decoded.length == SIGNATURE_BYTES ? decoded : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
