package dev.runlane.common.signature;

import static dev.runlane.common.Generators.between;
import static dev.runlane.common.Generators.bmpOutsideAscii;
import static dev.runlane.common.Generators.bytes;
import static dev.runlane.common.Generators.listOf;
import static dev.runlane.common.Generators.oneOf;
import static dev.runlane.common.Generators.weighted;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Generators and oracles shared by the verifiers' property tests, over the primitives of {@link
 * dev.runlane.common.Generators}.
 */
final class SignatureGenerators {

  /** Real clocks: 1970 to 2100, with a sub-second part (the verifiers use whole seconds). */
  static final long MAX_NOW = 4_102_444_800L;

  private SignatureGenerators() {}

  // ---- Clocks and timestamps ----

  static Instant now(Random r) {
    return Instant.ofEpochSecond(between(r, 0, MAX_NOW), between(r, 0, 999_999_999));
  }

  /** Zero to a week, with a sub-second part that the verifiers drop. */
  static Duration tolerance(Random r) {
    return Duration.ofSeconds(between(r, 0, 7 * 86_400L)).plusMillis(between(r, 0, 999));
  }

  /** A clock, a tolerance and a timestamp within it (both ends included). */
  record Fresh(Instant now, Duration tolerance, long ts) {}

  /** A clock, a tolerance and a timestamp outside it, with the reason it fails. */
  record Stale(Instant now, Duration tolerance, long ts, SignatureException.Reason reason) {}

  /** A clock, a tolerance and any timestamp header, often near the clock. */
  record Clocked(Instant now, Duration tolerance, String timestamp) {}

  static Clocked clocked(Random r) {
    Instant now = now(r);
    Duration tolerance = tolerance(r);
    return new Clocked(
        now, tolerance, timestampHeaderNear(r, now.getEpochSecond(), tolerance.getSeconds()));
  }

  static Fresh fresh(Random r) {
    Instant now = now(r);
    Duration tolerance = tolerance(r);
    long n = now.getEpochSecond();
    long t = tolerance.getSeconds();
    return new Fresh(now, tolerance, between(r, Math.max(0, n - t), n + t));
  }

  static Stale stale(Random r) {
    Instant now = now(r);
    Duration tolerance = tolerance(r);
    boolean past = r.nextBoolean();
    long n = now.getEpochSecond();
    long t = tolerance.getSeconds();
    if (past && n - t - 1 >= 0) {
      return new Stale(
          now, tolerance, between(r, 0, n - t - 1), SignatureException.Reason.TIMESTAMP_TOO_OLD);
    }
    return new Stale(
        now,
        tolerance,
        between(r, n + t + 1, Long.MAX_VALUE),
        SignatureException.Reason.TIMESTAMP_TOO_NEW);
  }

  /**
   * Another timestamp header for a fresh signed one: another fresh time, or the same time with
   * leading zeros (the signed text is the header's digits, not the number); never the signed text.
   */
  static String otherFreshTimestamp(Random r, Fresh f) {
    long n = f.now().getEpochSecond();
    long t = f.tolerance().getSeconds();
    String other;
    do {
      other =
          r.nextBoolean()
              ? Long.toString(between(r, Math.max(0, n - t), n + t))
              : oneOf(r, "0", "00", "000000") + f.ts();
    } while (other.equals(Long.toString(f.ts())));
    return other;
  }

  static Clock clockAt(Instant now) {
    return Clock.fixed(now, ZoneOffset.UTC);
  }

  /** A scheme's signing: who signs, with what configured, and a fresh timestamp. */
  interface Signed {
    Fresh fresh();
  }

  /** A signing, the body it signed and another body, sent in its place. */
  record AnotherBody<S extends Signed>(S signing, byte[] signed, byte[] sent) {}

  static <S extends Signed> AnotherBody<S> anotherBody(Random r, Function<Random, S> signing) {
    S s = signing.apply(r);
    byte[] signed = body(r);
    return new AnotherBody<>(s, signed, otherBody(r, signed));
  }

  /** A signing, another fresh timestamp header, sent in place of the signed one, and the body. */
  record AnotherTimestamp<S extends Signed>(S signing, String sent, byte[] body) {}

  static <S extends Signed> AnotherTimestamp<S> anotherTimestamp(
      Random r, Function<Random, S> signing) {
    S s = signing.apply(r);
    String sent = otherFreshTimestamp(r, s.fresh());
    return new AnotherTimestamp<>(s, sent, body(r));
  }

  // ---- Bodies and headers ----

  /** Bodies as a webhook sender might send them, and arbitrary bytes. */
  static byte[] body(Random r) {
    return switch (weighted(r, 3, 2, 1)) {
      case 0 -> bytes(r, 0, 512);
      case 1 -> text(r, 0, 256).getBytes(StandardCharsets.UTF_8);
      default -> new byte[0];
    };
  }

  /** A body other than {@code signed}. */
  static byte[] otherBody(Random r, byte[] signed) {
    byte[] sent;
    do {
      sent = body(r);
    } while (Arrays.equals(signed, sent));
    return sent;
  }

  /** Text over valid code points (no lone surrogate), ASCII-heavy, with control characters. */
  static String text(Random r, int minLength, int maxLength) {
    int length = between(r, minLength, maxLength);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < length; i++) {
      sb.appendCodePoint(
          switch (weighted(r, 8, 1, 2, 1)) {
            case 0 -> between(r, 0x20, 0x7e);
            case 1 -> between(r, 0, 0x1f);
            case 2 -> bmpOutsideAscii(r);
            default -> between(r, 0x10000, Character.MAX_CODE_POINT);
          });
    }
    return sb.toString();
  }

  /** Any UTF-16 code units, lone surrogates included. */
  static String anyChars(Random r, int maxLength) {
    int length = between(r, 0, maxLength);
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) between(r, 0, 0xffff));
    }
    return sb.toString();
  }

  /** A header value as it may arrive: absent (null), blank, or anything. */
  static String anyHeaderValue(Random r) {
    return switch (weighted(r, 1, 1, 4, 2)) {
      case 0 -> null;
      case 1 -> oneOf(r, "", " ", "\t", "\u2003", "\u0001", "\r\n");
      case 2 -> text(r, 0, 100);
      default -> anyChars(r, 100);
    };
  }

  /** A timestamp header near {@code now}: often fresh, sometimes padded or malformed. */
  static String timestampHeaderNear(Random r, long now, long tolerance) {
    int kind = weighted(r, 6, 1, 1, 1, 1, 1, 1, 2);
    if (kind == 6) {
      return oneOf(
          r,
          "9223372036854775807",
          "9223372036854775808",
          "99999999999999999999999",
          "000000000000000000000000001");
    }
    if (kind == 7) {
      return anyHeaderValue(r);
    }
    String digits =
        Long.toString(Math.max(0, now + between(r, -2 * tolerance - 5, 2 * tolerance + 5)));
    return switch (kind) {
      case 0 -> digits;
      case 1 -> "0" + digits;
      case 2 -> " " + digits + "\t";
      case 3 -> "+" + digits;
      case 4 -> "-" + digits;
      default -> digits.replace('3', '\u0663'); // ARABIC-INDIC DIGIT THREE
    };
  }

  /** {@code name} in lower case, upper case or as given: the lookup is case-insensitive. */
  static String casingOf(Random r, String name) {
    return oneOf(
        r, name, name.toLowerCase(Locale.ROOT), name.toUpperCase(Locale.ROOT), swapCase(name));
  }

  /** Each of {@code names} in a casing of {@link #casingOf}, drawn in order. */
  static List<String> casingsOf(Random r, String... names) {
    List<String> out = new ArrayList<>(names.length);
    for (String name : names) {
      out.add(casingOf(r, name));
    }
    return out;
  }

  /** Headers: value {@code i} under name {@code i}; a null value is an absent header. */
  static Map<String, String> named(List<String> names, String... values) {
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < values.length; i++) {
      out.put(names.get(i), values[i]);
    }
    return out;
  }

  private static String swapCase(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      sb.append(Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c));
    }
    return sb.toString();
  }

  /** A separator that splits entries of a header, possibly padded with whitespace. */
  static String padded(Random r, String separator) {
    return oneOf(r, "", " ", "  ", "\t") + separator + oneOf(r, "", " ", "  ", "\t");
  }

  /** The element at {@code index} modulo the size: the signer among the configured secrets. */
  static <T> T pick(List<T> choices, int index) {
    return choices.get(Math.floorMod(index, choices.size()));
  }

  /** Entries a header holds beside the correct one, where among them it goes, the separators. */
  record Placement(List<String> others, int position, List<String> separators) {

    /** The header: {@code others} with {@code correct} inserted at the position (modulo). */
    String header(String correct) {
      List<String> entries = new ArrayList<>(others);
      entries.add(Math.floorMod(position, entries.size() + 1), correct);
      return join(entries, separators);
    }
  }

  static Placement placement(Random r, Scheme scheme) {
    return new Placement(otherEntries(r, scheme), r.nextInt(), separators(r, scheme));
  }

  /** {@code entries} joined, entry {@code i} after separator {@code i % separators.size()}. */
  static String join(List<String> entries, List<String> separators) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < entries.size(); i++) {
      sb.append(i == 0 ? "" : separators.get(i % separators.size())).append(entries.get(i));
    }
    return sb.toString();
  }

  // ---- Signature headers ----

  /**
   * How a scheme writes the entries of its signature header, for generating them: {@code v1} starts
   * a version-1 entry ({@code v1=} or {@code v1,}); {@code mac} draws a MAC of the given length
   * (hex digits or bytes), {@code macLength} long when well-formed, at most {@code maxMacLength}
   * when not; {@code nearMisses} are four entries that almost pass (another version or casing, a
   * truncated or mangled MAC); {@code malformed} and {@code otherMalformed} are entries that do not
   * parse; {@code otherVersion} is a well-formed entry of another version; {@code separator} is
   * what stands between two entries.
   */
  record Scheme(
      String v1,
      BiFunction<Random, Integer, String> mac,
      int macLength,
      int maxMacLength,
      List<Function<Random, String>> nearMisses,
      List<String> malformed,
      Function<Random, String> otherVersion,
      List<String> otherMalformed,
      Function<Random, String> separator) {}

  /** A signature header as it may arrive: one to five entries of any kind, or any header value. */
  static String anySignature(Random r, Scheme scheme) {
    if (weighted(r, 4, 1) == 1) {
      return anyHeaderValue(r);
    }
    return join(listOf(r, 1, 5, () -> anySignatureEntry(r, scheme)), separators(r, scheme));
  }

  /** A signature entry: well-formed, a near miss, of a wrong length, malformed, or any text. */
  static String anySignatureEntry(Random r, Scheme scheme) {
    int kind = weighted(r, 3, 1, 1, 2, 1, 1, 1, 2);
    return switch (kind) {
      case 0 -> scheme.v1() + scheme.mac().apply(r, scheme.macLength());
      case 1, 2 -> scheme.nearMisses().get(kind - 1).apply(r);
      case 3 -> scheme.v1() + scheme.mac().apply(r, between(r, 0, scheme.maxMacLength()));
      case 4, 5 -> scheme.nearMisses().get(kind - 2).apply(r);
      case 6 -> oneOf(r, scheme.malformed().toArray(String[]::new));
      default -> text(r, 0, 20);
    };
  }

  /** Entries a header may hold beside the correct one: anything, including wrong v1 entries. */
  static List<String> otherEntries(Random r, Scheme scheme) {
    return listOf(r, 0, 4, () -> otherEntry(r, scheme));
  }

  static String otherEntry(Random r, Scheme scheme) {
    return switch (weighted(r, 2, 1, 1, 2)) {
      case 0 -> scheme.v1() + scheme.mac().apply(r, scheme.macLength());
      case 1 -> scheme.otherVersion().apply(r);
      case 2 -> oneOf(r, scheme.otherMalformed().toArray(String[]::new));
      default -> text(r, 0, 30);
    };
  }

  /** What stands between entries, one to four draws of the scheme's separator. */
  static List<String> separators(Random r, Scheme scheme) {
    return listOf(r, 1, 4, () -> scheme.separator().apply(r));
  }

  /** One to four keys from {@code key} (rotation), newest first. */
  static <K> List<K> rotation(Random r, Function<Random, K> key) {
    return listOf(r, 1, 4, () -> key.apply(r));
  }

  /**
   * A key from {@code key} that is not one of {@code configured}, nor an HMAC-equivalent of one;
   * {@code hmacKey} gives the bytes a key signs with.
   */
  static <K> K otherKey(
      Random r, List<K> configured, Function<Random, K> key, Function<K, byte[]> hmacKey) {
    while (true) {
      K candidate = key.apply(r);
      byte[] candidateKey = hmacKey.apply(candidate);
      if (configured.stream().noneMatch(k -> sameHmacKey(hmacKey.apply(k), candidateKey))) {
        return candidate;
      }
    }
  }

  /**
   * Whether two HMAC keys give the same MAC for every message. HMAC hashes a key longer than the
   * block (64 bytes for SHA-256) and pads a shorter one with zeros (RFC 2104), so "k" and "k\0", or
   * a long key and its SHA-256 digest, are the same key. Two configured secrets that differ only so
   * are not "different secrets" for the no-forgery property.
   */
  static boolean sameHmacKey(byte[] a, byte[] b) {
    return Arrays.equals(normalizedKey(a), normalizedKey(b));
  }

  private static byte[] normalizedKey(byte[] key) {
    byte[] k = key.length > 64 ? sha256(key) : key;
    int n = k.length;
    while (n > 0 && k[n - 1] == 0) {
      n--;
    }
    return Arrays.copyOf(k, n);
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The documented reason for a request whose headers fail before the signature is compared, or
   * null when the headers are present, the timestamp well-formed and fresh. Written from the
   * verifiers' documentation, independently of {@link Hmac}: a header is missing when absent or
   * blank; the timestamp is the trimmed value, ASCII digits only, at most {@link Long#MAX_VALUE};
   * fresh means {@code now - tolerance <= ts <= now + tolerance} in whole seconds.
   */
  static SignatureException.Reason expectedHeaderFailure(
      List<String> requiredHeaders, String timestamp, Instant now, Duration tolerance) {
    for (String value : requiredHeaders) {
      if (value == null || value.isBlank()) {
        return SignatureException.Reason.MISSING_HEADER;
      }
    }
    String ts = timestamp.trim();
    if (ts.isEmpty() || !ts.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return SignatureException.Reason.MALFORMED_TIMESTAMP;
    }
    BigInteger t = new BigInteger(ts);
    if (t.compareTo(BigInteger.valueOf(Long.MAX_VALUE)) > 0) {
      return SignatureException.Reason.MALFORMED_TIMESTAMP;
    }
    BigInteger nowSeconds = BigInteger.valueOf(now.getEpochSecond());
    BigInteger tol = BigInteger.valueOf(tolerance.getSeconds());
    if (t.compareTo(nowSeconds.subtract(tol)) < 0) {
      return SignatureException.Reason.TIMESTAMP_TOO_OLD;
    }
    if (t.compareTo(nowSeconds.add(tol)) > 0) {
      return SignatureException.Reason.TIMESTAMP_TOO_NEW;
    }
    return null;
  }
}
