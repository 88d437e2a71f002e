package dev.runlane.common.signature;

import static dev.runlane.common.Generators.chars;
import static dev.runlane.common.signature.SignatureGenerators.body;
import static dev.runlane.common.signature.SignatureGenerators.clockAt;
import static dev.runlane.common.signature.Verifications.assertVerifies;
import static dev.runlane.common.signature.Verifications.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.PropertyCheck;
import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import dev.runlane.common.signature.SignatureGenerators.Clocked;
import dev.runlane.common.signature.SignatureGenerators.Fresh;
import dev.runlane.common.signature.SignatureGenerators.Placement;
import dev.runlane.common.signature.SignatureGenerators.Stale;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
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
        List<Secret> secrets, Clocked clocked, String signature, byte[] body, List<String> names) {}
    PropertyCheck.forAll(
        1000,
        r ->
            new Request(
                secrets(r),
                SignatureGenerators.clocked(r),
                SignatureGenerators.anySignature(r, SCHEME),
                body(r),
                SignatureGenerators.casingsOf(
                    r,
                    SumeSignatureVerifier.TIMESTAMP_HEADER,
                    SumeSignatureVerifier.SIGNATURE_HEADER)),
        in -> {
          Instant now = in.clocked().now();
          Duration tolerance = in.clocked().tolerance();
          String timestamp = in.clocked().timestamp();
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(in.secrets(), tolerance, clockAt(now));
          Map<String, String> headers =
              SignatureGenerators.named(in.names(), timestamp, in.signature());

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
    record Request(Signing signing, byte[] body, boolean upperCaseHex, Placement placement) {}
    PropertyCheck.forAll(
        1000,
        r ->
            new Request(
                signing(r), body(r), r.nextBoolean(), SignatureGenerators.placement(r, SCHEME)),
        in -> {
          Fresh fresh = in.signing().fresh();
          String correct = SumeSignatureVerifier.sign(in.signing().signer(), fresh.ts(), in.body());
          if (in.upperCaseHex()) {
            correct = "v1=" + correct.substring(3).toUpperCase(Locale.ROOT);
          }

          assertVerifies(
              new SumeSignatureVerifier(
                  in.signing().secrets(), fresh.tolerance(), clockAt(fresh.now())),
              in.body(),
              HeaderLookup.of(headers(Long.toString(fresh.ts()), in.placement().header(correct))));
        });
  }

  @Test
  void aSignatureOverAnotherBodyNeverVerifies() {
    PropertyCheck.forAll(
        1000,
        r -> SignatureGenerators.anotherBody(r, SumeSignatureVerifierPropertiesTest::signing),
        in -> {
          String ts = Long.toString(in.signing().fresh().ts());
          assertNoMatchingSignature(in.signing(), in.signed(), in.sent(), ts);
        });
  }

  @Test
  void aSignatureForAnotherTimestampNeverVerifies() {
    PropertyCheck.forAll(
        1000,
        r -> SignatureGenerators.anotherTimestamp(r, SumeSignatureVerifierPropertiesTest::signing),
        in -> assertNoMatchingSignature(in.signing(), in.body(), in.body(), in.sent()));
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
          Signing signing = new Signing(in.configured(), in.signer(), in.fresh());
          String ts = Long.toString(in.fresh().ts());
          assertNoMatchingSignature(signing, in.body(), in.body(), ts);
        });
  }

  @Test
  void aTimestampOutsideTheToleranceAlwaysFails() {
    record Request(List<Secret> secrets, int signer, Stale stale, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> new Request(secrets(r), r.nextInt(), SignatureGenerators.stale(r), body(r)),
        in -> {
          Stale stale = in.stale();
          Secret secret = SignatureGenerators.pick(in.secrets(), in.signer());
          SumeSignatureVerifier verifier =
              new SumeSignatureVerifier(in.secrets(), stale.tolerance(), clockAt(stale.now()));

          SignatureException e =
              failure(
                  verifier,
                  in.body(),
                  headers(
                      Long.toString(stale.ts()),
                      SumeSignatureVerifier.sign(secret, stale.ts(), in.body())));

          assertThat(e.reason()).isEqualTo(stale.reason());
          return stale.reason();
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

  /**
   * A request signed by {@code signing} over {@code signedBody} at its fresh timestamp, but sent
   * with {@code sentBody} and {@code sentTimestamp}, is refused: {@code NO_MATCHING_SIGNATURE}.
   */
  private static void assertNoMatchingSignature(
      Signing signing, byte[] signedBody, byte[] sentBody, String sentTimestamp) {
    Fresh fresh = signing.fresh();
    String signature = SumeSignatureVerifier.sign(signing.signer(), fresh.ts(), signedBody);
    SumeSignatureVerifier verifier =
        new SumeSignatureVerifier(signing.secrets(), fresh.tolerance(), clockAt(fresh.now()));

    SignatureException e = failure(verifier, sentBody, headers(sentTimestamp, signature));

    assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  private static Map<String, String> headers(String timestamp, String signature) {
    return Map.of(
        SumeSignatureVerifier.TIMESTAMP_HEADER, timestamp,
        SumeSignatureVerifier.SIGNATURE_HEADER, signature);
  }

  // ---- Generators ----

  /** The configured secrets, the one that signs, and a clock with a fresh timestamp. */
  record Signing(List<Secret> secrets, Secret signer, Fresh fresh)
      implements SignatureGenerators.Signed {}

  static Signing signing(Random r) {
    List<Secret> secrets = secrets(r);
    Secret signer = SignatureGenerators.pick(secrets, r.nextInt());
    return new Signing(secrets, signer, SignatureGenerators.fresh(r));
  }

  /** Entries that almost pass: another casing or version, a mangled MAC. */
  private static final List<Function<Random, String>> NEAR_MISSES =
      List.of(
          r -> "V1=" + hex(r, 64),
          r -> "v0=" + hex(r, 64),
          r -> "v1=" + hex(r, 63) + "g",
          r -> "v1= " + hex(r, 64));

  /** {@code v1=<64 hex digits>} entries, separated by commas. */
  static final SignatureGenerators.Scheme SCHEME =
      new SignatureGenerators.Scheme(
          "v1=",
          SumeSignatureVerifierPropertiesTest::hex,
          64,
          70,
          NEAR_MISSES,
          List.of("", "v1", "=", "=abc", "v1==", "v2=abc", "v1=\u0663"),
          r -> "v0=" + hex(r, 64),
          List.of("", "v1", "=", "v1=zz", "v2=abc"),
          r -> SignatureGenerators.padded(r, ","));

  /** A secret of any non-blank text. */
  static Secret secret(Random r) {
    String value;
    do {
      value = SignatureGenerators.text(r, 1, 100);
    } while (value.isBlank());
    return Secret.of(value);
  }

  static List<Secret> secrets(Random r) {
    return SignatureGenerators.rotation(r, SumeSignatureVerifierPropertiesTest::secret);
  }

  static Secret otherSecret(Random r, List<Secret> configured) {
    return SignatureGenerators.otherKey(
        r, configured, SumeSignatureVerifierPropertiesTest::secret, Secret::utf8);
  }

  private static String hex(Random r, int length) {
    return chars(r, "0123456789abcdefABCDEF", length, length);
  }
}
