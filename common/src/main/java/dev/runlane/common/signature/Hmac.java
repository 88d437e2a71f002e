package dev.runlane.common.signature;

import dev.runlane.common.signature.SignatureException.Reason;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 keys prepared once, plus the checks both schemes share.
 *
 * <p>Each thread gets its own initialized {@link Mac} per key (cloned from a prototype), so the hot
 * path neither looks up a provider nor re-derives the key pads. Meant for long-lived platform
 * threads (event loops, worker pools).
 */
final class Hmac {

  static final String ALGORITHM = "HmacSHA256";
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** Hex digit values by Latin-1 code, -1 for other characters. */
  private static final byte[] HEX_VALUES = hexValues();

  /** Up to 18 digits always fit a long, so the digit-by-digit parse needs no overflow check. */
  private static final int SAFE_DIGITS = 18;

  private final SecretKeySpec[] keys;
  private final Mac[] prototypes;
  private final ThreadLocal<Mac[]> perThread;

  Hmac(List<byte[]> keyBytes) {
    if (keyBytes.isEmpty()) {
      throw new IllegalArgumentException("at least one secret is required");
    }
    this.keys = new SecretKeySpec[keyBytes.size()];
    this.prototypes = new Mac[keyBytes.size()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = new SecretKeySpec(keyBytes.get(i), ALGORITHM);
      prototypes[i] = newMac(keys[i]);
    }
    this.perThread = ThreadLocal.withInitial(this::copies);
  }

  /**
   * Whether HMAC(key, prefix + body) equals one of the candidates for any key, compared in constant
   * time.
   */
  boolean anyMatches(byte[][] candidates, byte[] prefix, byte[] body) {
    for (Mac mac : macs()) {
      mac.update(prefix);
      mac.update(body);
      byte[] expected = mac.doFinal();
      for (byte[] candidate : candidates) {
        if (MessageDigest.isEqual(expected, candidate)) { // the JDK's constant-time compare
          return true;
        }
      }
    }
    return false;
  }

  /** This thread's MACs, one per key, in key order; each is reset (doFinal resets). */
  Mac[] macs() {
    return perThread.get();
  }

  private Mac[] copies() {
    Mac[] out = new Mac[prototypes.length];
    for (int i = 0; i < out.length; i++) {
      try {
        out[i] = (Mac) prototypes[i].clone();
      } catch (CloneNotSupportedException e) {
        out[i] = newMac(keys[i]);
      }
    }
    return out;
  }

  static Mac newMac(byte[] key) {
    return newMac(new SecretKeySpec(key, ALGORITHM));
  }

  private static Mac newMac(SecretKeySpec key) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return mac;
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(ALGORITHM + " is not available", e);
    }
  }

  /** The header value, trimmed; {@code MISSING_HEADER} when absent or blank. */
  static String require(HeaderLookup headers, String name) throws SignatureException {
    String value = headers.get(name);
    if (value == null || value.isBlank()) {
      throw new SignatureException(Reason.MISSING_HEADER, "missing header " + name);
    }
    return value.trim();
  }

  /** Parses a Unix time in seconds: ASCII digits only. */
  static long parseTimestamp(String value, String header) throws SignatureException {
    // Digit by digit rather than Long.parseLong: about half the cost, and it rejects what
    // parseLong would accept (a sign, non-ASCII digits such as U+0663) in the same pass.
    int n = value.length();
    if (n == 0 || n > SAFE_DIGITS) {
      return parseLongTimestamp(value, header);
    }
    long ts = 0;
    for (int i = 0; i < n; i++) {
      int digit = value.charAt(i) - '0';
      if (digit < 0 || digit > 9) {
        return parseLongTimestamp(value, header);
      }
      ts = ts * 10 + digit;
    }
    return ts;
  }

  /**
   * The rare cases: empty, too long to parse digit by digit without overflow, or not all ASCII
   * digits. Long.parseLong reports overflow and gives the cause chained to the failure.
   */
  private static long parseLongTimestamp(String value, String header) throws SignatureException {
    long ts;
    try {
      ts = Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new SignatureException(
          Reason.MALFORMED_TIMESTAMP, header + " is not a Unix time in seconds", e);
    }
    for (int i = 0; i < value.length(); i++) {
      if (!isDigit(value.charAt(i))) {
        throw new SignatureException(
            Reason.MALFORMED_TIMESTAMP,
            header + " is not a Unix time in seconds (ASCII digits only, no sign)");
      }
    }
    return ts;
  }

  /**
   * The ASCII bytes of {@code text} followed by {@code '.'}, for a signed prefix such as "{@code
   * <timestamp>.}". Only for ASCII text (validated digits, or a caller that checked it).
   */
  static byte[] withDot(String text) {
    int n = text.length();
    byte[] out = new byte[n + 1];
    for (int i = 0; i < n; i++) {
      out[i] = (byte) text.charAt(i);
    }
    out[n] = '.';
    return out;
  }

  /** Accepts {@code now - tolerance <= ts <= now + tolerance} (both ends included). */
  static void checkFreshness(long ts, Clock clock, long toleranceSeconds)
      throws SignatureException {
    long now = clock.instant().getEpochSecond();
    long age = now - ts; // ts >= 0 and now is a real clock: no overflow
    if (age > toleranceSeconds) {
      throw new SignatureException(
          Reason.TIMESTAMP_TOO_OLD,
          "timestamp is " + age + " s in the past, tolerance is " + toleranceSeconds + " s");
    }
    if (-age > toleranceSeconds) {
      throw new SignatureException(
          Reason.TIMESTAMP_TOO_NEW,
          "timestamp is " + -age + " s in the future, tolerance is " + toleranceSeconds + " s");
    }
  }

  static long toleranceSeconds(Duration tolerance) {
    Objects.requireNonNull(tolerance, "tolerance");
    if (tolerance.isNegative()) {
      throw new IllegalArgumentException("tolerance must not be negative: " + tolerance);
    }
    return tolerance.getSeconds();
  }

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[bytes[i] & 0xf];
    }
    return new String(out);
  }

  /** Decodes hex (either case) of the given byte length, or null if it is not. */
  static byte[] unhex(String s, int from, int to, int expectedBytes) {
    if (to - from != expectedBytes * 2) {
      return null;
    }
    byte[] out = new byte[expectedBytes];
    int invalid = 0;
    for (int i = 0, j = from; i < expectedBytes; i++, j += 2) {
      int hi = hexValue(s.charAt(j));
      int lo = hexValue(s.charAt(j + 1));
      invalid |= hi | lo; // negative once any character is not a hex digit
      out[i] = (byte) ((hi << 4) | lo);
    }
    return invalid < 0 ? null : out;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /**
   * The value of a hex digit, or -1. Branch-free (a table lookup, and a sign mask for characters
   * above U+00FF): three range tests per digit cost a third more on a 64-digit signature.
   */
  private static int hexValue(char c) {
    return HEX_VALUES[c & 0xff] | ((0xff - c) >> 31);
  }

  private static byte[] hexValues() {
    byte[] values = new byte[256];
    Arrays.fill(values, (byte) -1);
    for (int i = 0; i < 10; i++) {
      values['0' + i] = (byte) i;
    }
    for (int i = 0; i < 6; i++) {
      values['a' + i] = (byte) (10 + i);
      values['A' + i] = (byte) (10 + i);
    }
    return values;
  }
}
