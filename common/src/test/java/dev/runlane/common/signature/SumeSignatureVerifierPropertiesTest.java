package dev.runlane.common.signature;

import static dev.runlane.common.signature.SignatureGenerators.between;
import static dev.runlane.common.signature.SignatureGenerators.body;
import static dev.runlane.common.signature.SignatureGenerators.casingOf;
import static dev.runlane.common.signature.SignatureGenerators.chars;
import static dev.runlane.common.signature.SignatureGenerators.clockAt;
import static dev.runlane.common.signature.SignatureGenerators.listOf;
import static dev.runlane.common.signature.SignatureGenerators.oneOf;
import static dev.runlane.common.signature.SignatureGenerators.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.runlane.common.PropertyCheck;
import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import dev.runlane.common.signature.SignatureGenerators.Clocked;
import dev.runlane.common.signature.SignatureGenerators.Fresh;
import dev.runlane.common.signature.SignatureGenerators.Stale;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Properties of {@link SumeSignatureVerifier} over generated secrets, clocks, headers and bodies:
 * every request fails with its documented reason unless it carries a correct, fresh signature; a
 * correct one always verifies, whatever else the header holds; changing what was signed never
 * verifies.
 */
class SumeSignatureVerifierPropertiesTest {

  // 1000 tries each: a try costs a few HMACs.

  @Test
  void anyRequestFailsWithItsDocumentedReason() {
    record Request(
        List<Secret> secrets,
        Clocked clocked,
        String signature,
        byte[] body,
        String timestampName,
        String signatureName) {}
    PropertyCheck.forAll(
        1000,
        r ->
            new Request(
                secrets(r),
                SignatureGenerators.clocked(r),
                anySignature(r),
                body(r),
                casingOf(r, SumeSignatureVerifier.TIMESTAMP_HEADER),
                casingOf(r, SumeSignatureVerifier.SIGNATURE_HEADER)),
        in -> {
          Instant now = in.clocked().now();
          Duration tolerance = in.clocked().tolerance();
          String timestamp = in.clocked().timestamp();
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(in.secrets(), tolerance, clockAt(now));
          Map<String, String> headers = new HashMap<>();
          headers.put(in.timestampName(), timestamp);
          headers.put(in.signatureName(), in.signature());

          SignatureException e = failure(verifier, in.body(), headers);

          Reason expected =
              SignatureGenerators.expectedHeaderFailure(
                  Arrays.asList(timestamp, in.signature()), timestamp, now, tolerance);
          if (expected != null) {
            assertThat(e.reason()).isEqualTo(expected);
          } else {
            assertThat(e.reason()).isEqualTo(expectedSignatureFailure(in.signature().trim()));
          }
          assertThat(e.code()).isEqualTo(e.reason().name().toLowerCase(Locale.ROOT));
          assertNoSecretIn(e, in.secrets());
          return e.reason();
        },
        EnumSet.allOf(Reason.class)); // the generators reach every outcome
  }

  @Test
  void aCorrectSignatureAlwaysVerifies() {
    record Request(
        List<Secret> secrets,
        int signer,
        Fresh fresh,
        byte[] body,
        List<String> others,
        int position,
        boolean upperCaseHex,
        List<String> separators) {}
    PropertyCheck.forAll(
        1000,
        r ->
            new Request(
                secrets(r),
                r.nextInt(),
                SignatureGenerators.fresh(r),
                body(r),
                otherEntries(r),
                r.nextInt(),
                r.nextBoolean(),
                separators(r)),
        in -> {
          Secret secret = in.secrets().get(Math.floorMod(in.signer(), in.secrets().size()));
          String correct = SumeSignatureVerifier.sign(secret, in.fresh().ts(), in.body());
          if (in.upperCaseHex()) {
            correct = "v1=" + correct.substring(3).toUpperCase(Locale.ROOT);
          }
          List<String> entries = new ArrayList<>(in.others());
          entries.add(Math.floorMod(in.position(), entries.size() + 1), correct);

          verify(
              new SumeSignatureVerifier(
                  in.secrets(), in.fresh().tolerance(), clockAt(in.fresh().now())),
              in.body(),
              Long.toString(in.fresh().ts()),
              SignatureGenerators.join(entries, in.separators()));
        });
  }

  @Test
  void aSignatureOverAnotherBodyNeverVerifies() {
    record Request(List<Secret> secrets, int signer, Fresh fresh, byte[] signed, byte[] sent) {}
    PropertyCheck.forAll(
        1000,
        r -> {
          List<Secret> secrets = secrets(r);
          int signer = r.nextInt();
          Fresh fresh = SignatureGenerators.fresh(r);
          byte[] signed = body(r);
          return new Request(
              secrets, signer, fresh, signed, SignatureGenerators.otherBody(r, signed));
        },
        in -> {
          Secret secret = in.secrets().get(Math.floorMod(in.signer(), in.secrets().size()));
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(
                  in.secrets(), in.fresh().tolerance(), clockAt(in.fresh().now()));

          SignatureException e =
              failure(
                  verifier,
                  in.sent(),
                  headers(
                      Long.toString(in.fresh().ts()),
                      SumeSignatureVerifier.sign(secret, in.fresh().ts(), in.signed())));

          assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
        });
  }

  @Test
  void aSignatureForAnotherTimestampNeverVerifies() {
    record Request(List<Secret> secrets, int signer, Fresh fresh, String sent, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> {
          List<Secret> secrets = secrets(r);
          int signer = r.nextInt();
          Fresh fresh = SignatureGenerators.fresh(r);
          return new Request(
              secrets, signer, fresh, SignatureGenerators.otherFreshTimestamp(r, fresh), body(r));
        },
        in -> {
          Secret secret = in.secrets().get(Math.floorMod(in.signer(), in.secrets().size()));
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(
                  in.secrets(), in.fresh().tolerance(), clockAt(in.fresh().now()));

          SignatureException e =
              failure(
                  verifier,
                  in.body(),
                  headers(
                      in.sent(), SumeSignatureVerifier.sign(secret, in.fresh().ts(), in.body())));

          assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
        });
  }

  @Test
  void aSignatureWithAnotherSecretNeverVerifies() {
    record Request(List<Secret> configured, Secret signer, Fresh fresh, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> {
          List<Secret> configured = secrets(r);
          Secret signer = otherSecret(r, configured);
          return new Request(configured, signer, SignatureGenerators.fresh(r), body(r));
        },
        in -> {
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(
                  in.configured(), in.fresh().tolerance(), clockAt(in.fresh().now()));

          SignatureException e =
              failure(
                  verifier,
                  in.body(),
                  headers(
                      Long.toString(in.fresh().ts()),
                      SumeSignatureVerifier.sign(in.signer(), in.fresh().ts(), in.body())));

          assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
        });
  }

  @Test
  void aTimestampOutsideTheToleranceAlwaysFails() {
    record Request(List<Secret> secrets, int signer, Stale stale, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> new Request(secrets(r), r.nextInt(), SignatureGenerators.stale(r), body(r)),
        in -> {
          Secret secret = in.secrets().get(Math.floorMod(in.signer(), in.secrets().size()));
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(
                  in.secrets(), in.stale().tolerance(), clockAt(in.stale().now()));

          SignatureException e =
              failure(
                  verifier,
                  in.body(),
                  headers(
                      Long.toString(in.stale().ts()),
                      SumeSignatureVerifier.sign(secret, in.stale().ts(), in.body())));

          assertThat(e.reason()).isEqualTo(in.stale().reason());
          return in.stale().reason();
        },
        EnumSet.of(Reason.TIMESTAMP_TOO_OLD, Reason.TIMESTAMP_TOO_NEW));
  }

  /**
   * The documented outcome of a signature header once the timestamp passed: no well-formed {@code
   * v1=<64 hex digits>} entry and a malformed one is {@code MALFORMED_SIGNATURE}; otherwise (only
   * other versions, or v1 entries that do not match) {@code NO_MATCHING_SIGNATURE}. A generated
   * header never holds a correct signature (2^-256).
   */
  private static Reason expectedSignatureFailure(String header) {
    boolean wellFormedV1 = false;
    boolean malformed = false;
    for (String raw : header.split(",", -1)) {
      String entry = strip(raw);
      if (entry.isEmpty()) {
        continue;
      }
      int eq = entry.indexOf('=');
      if (eq <= 0) {
        malformed = true;
      } else if (entry.substring(0, eq).equals("v1")) {
        if (entry.substring(eq + 1).matches("[0-9a-fA-F]{64}")) {
          wellFormedV1 = true;
        } else {
          malformed = true;
        }
      }
    }
    return !wellFormedV1 && malformed ? Reason.MALFORMED_SIGNATURE : Reason.NO_MATCHING_SIGNATURE;
  }

  /**
   * The message is for logs: it never holds a secret, nor a MAC (a run of 32 hex digits; the
   * longest number it may hold, an age in seconds, has at most 20 digits).
   */
  static void assertNoSecretIn(SignatureException e, List<Secret> secrets) {
    assertThat(e.getMessage()).isNotBlank().doesNotContainPattern("[0-9a-fA-F]{32}");
    for (Secret secret : secrets) {
      if (secret.reveal().length() >= 12) { // shorter ones may be a word of the message
        assertThat(e.getMessage()).doesNotContain(secret.reveal());
      }
    }
  }

  private static String strip(String s) {
    int a = 0;
    int b = s.length();
    while (a < b && Character.isWhitespace(s.charAt(a))) {
      a++;
    }
    while (b > a && Character.isWhitespace(s.charAt(b - 1))) {
      b--;
    }
    return s.substring(a, b);
  }

  private static void verify(
      SumeSignatureVerifier verifier, byte[] body, String timestamp, String signature) {
    try {
      verifier.verify(body, HeaderLookup.of(headers(timestamp, signature)));
    } catch (SignatureException e) {
      fail("expected to verify, failed with " + e.code() + ": " + e.getMessage(), e);
    }
  }

  /** The verifier's failure; any other exception escapes and fails the property. */
  private static SignatureException failure(
      SumeSignatureVerifier verifier, byte[] body, Map<String, String> headers) {
    try {
      verifier.verify(body, HeaderLookup.of(headers));
    } catch (SignatureException e) {
      return e;
    }
    return fail("expected a SignatureException, the request verified");
  }

  private static Map<String, String> headers(String timestamp, String signature) {
    return Map.of(
        SumeSignatureVerifier.TIMESTAMP_HEADER, timestamp,
        SumeSignatureVerifier.SIGNATURE_HEADER, signature);
  }

  // ---- Generators ----

  static Secret secret(Random r) {
    String value;
    do {
      value = SignatureGenerators.text(r, 1, 100);
    } while (value.isBlank());
    return Secret.of(value);
  }

  /** One to four secrets (rotation), newest first. */
  static List<Secret> secrets(Random r) {
    return listOf(r, 1, 4, () -> secret(r));
  }

  /** A secret that is not one of {@code configured}, nor an HMAC-equivalent key of one. */
  static Secret otherSecret(Random r, List<Secret> configured) {
    while (true) {
      Secret candidate = secret(r);
      if (configured.stream()
          .noneMatch(s -> SignatureGenerators.sameHmacKey(s.utf8(), candidate.utf8()))) {
        return candidate;
      }
    }
  }

  static String anySignature(Random r) {
    if (weighted(r, 4, 1) == 1) {
      return SignatureGenerators.anyHeaderValue(r);
    }
    return SignatureGenerators.join(listOf(r, 1, 5, () -> anySignatureEntry(r)), separators(r));
  }

  static String anySignatureEntry(Random r) {
    return switch (weighted(r, 3, 1, 1, 2, 1, 1, 1, 2)) {
      case 0 -> "v1=" + hex(r, 64);
      case 1 -> "V1=" + hex(r, 64);
      case 2 -> "v0=" + hex(r, 64);
      case 3 -> "v1=" + hex(r, between(r, 0, 70));
      case 4 -> "v1=" + hex(r, 63) + "g";
      case 5 -> "v1= " + hex(r, 64);
      case 6 -> oneOf(r, "", "v1", "=", "=abc", "v1==", "v2=abc", "v1=\u0663");
      default -> SignatureGenerators.text(r, 0, 20);
    };
  }

  /** Entries a header may hold beside the correct one: anything, including wrong v1 entries. */
  static List<String> otherEntries(Random r) {
    return listOf(r, 0, 4, () -> otherEntry(r));
  }

  static String otherEntry(Random r) {
    return switch (weighted(r, 2, 1, 1, 2)) {
      case 0 -> "v1=" + hex(r, 64);
      case 1 -> "v0=" + hex(r, 64);
      case 2 -> oneOf(r, "", "v1", "=", "v1=zz", "v2=abc");
      default -> SignatureGenerators.text(r, 0, 30);
    };
  }

  static List<String> separators(Random r) {
    return listOf(r, 1, 4, () -> separator(r));
  }

  static String separator(Random r) {
    return SignatureGenerators.padded(r, ",");
  }

  private static String hex(Random r, int length) {
    return chars(r, "0123456789abcdefABCDEF", length, length);
  }
}
