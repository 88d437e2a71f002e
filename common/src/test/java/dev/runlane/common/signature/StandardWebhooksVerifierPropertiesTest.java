package dev.runlane.common.signature;

import static dev.runlane.common.Generators.bytes;
import static dev.runlane.common.Generators.chars;
import static dev.runlane.common.Generators.oneOf;
import static dev.runlane.common.signature.SignatureGenerators.body;
import static dev.runlane.common.signature.SignatureGenerators.clockAt;
import static dev.runlane.common.signature.Verifications.assertVerifies;
import static dev.runlane.common.signature.Verifications.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.runlane.common.PropertyCheck;
import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import dev.runlane.common.signature.SignatureGenerators.Clocked;
import dev.runlane.common.signature.SignatureGenerators.Fresh;
import dev.runlane.common.signature.SignatureGenerators.Placement;
import dev.runlane.common.signature.SignatureGenerators.Stale;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Properties of {@link StandardWebhooksVerifier} over generated keys, clocks, headers and bodies:
 * every request fails with its documented reason unless it carries a correct, fresh signature; a
 * correct one always verifies, whatever else the header holds; changing the body, timestamp, id or
 * secret never verifies.
 */
class StandardWebhooksVerifierPropertiesTest {

  /** A signing key and the secret that configures it ({@code whsec_<base64>} or plain base64). */
  record Key(byte[] bytes, Secret secret) {}

  // 1000 tries each: a try costs a few HMACs.

  @Test
  void anyRequestFailsWithItsDocumentedReason() {
    record Request(
        List<Key> keys,
        String id,
        Clocked clocked,
        String signature,
        byte[] body,
        List<String> names) {}
    PropertyCheck.forAll(
        1000,
        r ->
            new Request(
                keys(r),
                anyId(r),
                SignatureGenerators.clocked(r),
                SignatureGenerators.anySignature(r, SCHEME),
                body(r),
                SignatureGenerators.casingsOf(
                    r,
                    StandardWebhooksVerifier.ID_HEADER,
                    StandardWebhooksVerifier.TIMESTAMP_HEADER,
                    StandardWebhooksVerifier.SIGNATURE_HEADER)),
        in -> {
          Clocked clocked = in.clocked();
          StandardWebhooksVerifier verifier =
              verifier(in.keys(), clocked.tolerance(), clocked.now());
          Map<String, String> headers =
              SignatureGenerators.named(in.names(), in.id(), clocked.timestamp(), in.signature());

          SignatureException e = failure(verifier, in.body(), headers);

          Reason expected =
              SignatureGenerators.expectedHeaderFailure(
                  Arrays.asList(in.id(), clocked.timestamp(), in.signature()),
                  clocked.timestamp(),
                  clocked.now(),
                  clocked.tolerance());
          if (expected != null) {
            assertThat(e.reason()).isEqualTo(expected);
          } else {
            assertThat(e.reason()).isEqualTo(expectedSignatureFailure(in.signature().trim()));
          }
          assertThat(e.code()).isEqualTo(e.reason().name().toLowerCase(Locale.ROOT));
          SumeSignatureVerifierPropertiesTest.assertNoSecretIn(
              e, in.keys().stream().map(Key::secret).toList());
          return e.reason();
        },
        EnumSet.allOf(Reason.class)); // the generators reach every outcome
  }

  @Test
  void aCorrectSignatureAlwaysVerifies() {
    record Request(Signing signing, byte[] body, Placement placement) {}
    PropertyCheck.forAll(
        1000,
        r -> new Request(signing(r), body(r), SignatureGenerators.placement(r, SCHEME)),
        in -> {
          Signing signing = in.signing();
          Fresh fresh = signing.fresh();
          String correct =
              StandardWebhooksVerifier.sign(signing.signer(), signing.id(), fresh.ts(), in.body());

          assertVerifies(
              verifier(signing.keys(), fresh.tolerance(), fresh.now()),
              in.body(),
              HeaderLookup.of(
                  headers(
                      signing.id(), Long.toString(fresh.ts()), in.placement().header(correct))));
        });
  }

  @Test
  void aSignatureOverAnotherBodyNeverVerifies() {
    PropertyCheck.forAll(
        1000,
        r -> SignatureGenerators.anotherBody(r, StandardWebhooksVerifierPropertiesTest::signing),
        in -> assertNoMatchingSignature(in.signing(), in.signed(), in.sent()));
  }

  @Test
  void aSignatureForAnotherTimestampNeverVerifies() {
    PropertyCheck.forAll(
        1000,
        r ->
            SignatureGenerators.anotherTimestamp(
                r, StandardWebhooksVerifierPropertiesTest::signing),
        in ->
            assertNoMatchingSignature(
                in.signing(), in.body(), in.body(), in.signing().id(), in.sent()));
  }

  @Test
  void aSignatureForAnotherIdNeverVerifies() {
    record Request(Signing signing, String sentId, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> {
          List<Key> keys = keys(r);
          Secret signer = SignatureGenerators.pick(keys, r.nextInt()).secret();
          String signedId = id(r);
          String sentId;
          do {
            sentId = id(r);
          } while (sentId.equals(signedId));
          Signing signing = new Signing(keys, signer, signedId, SignatureGenerators.fresh(r));
          return new Request(signing, sentId, body(r));
        },
        in ->
            assertNoMatchingSignature(
                in.signing(), in.body(), in.body(), in.sentId(), in.signing().timestamp()));
  }

  @Test
  void aSignatureWithAnotherSecretNeverVerifies() {
    record Request(Signing signing, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> {
          List<Key> configured = keys(r);
          Secret other = otherKey(r, configured).secret();
          return new Request(
              new Signing(configured, other, id(r), SignatureGenerators.fresh(r)), body(r));
        },
        in -> assertNoMatchingSignature(in.signing(), in.body(), in.body()));
  }

  @Test
  void aTimestampOutsideTheToleranceAlwaysFails() {
    record Request(List<Key> keys, int signer, String id, Stale stale, byte[] body) {}
    PropertyCheck.forAll(
        1000,
        r -> new Request(keys(r), r.nextInt(), id(r), SignatureGenerators.stale(r), body(r)),
        in -> {
          Secret secret = SignatureGenerators.pick(in.keys(), in.signer()).secret();
          Stale stale = in.stale();
          StandardWebhooksVerifier verifier = verifier(in.keys(), stale.tolerance(), stale.now());

          SignatureException e =
              failure(
                  verifier,
                  in.body(),
                  headers(
                      in.id(),
                      Long.toString(stale.ts()),
                      StandardWebhooksVerifier.sign(secret, in.id(), stale.ts(), in.body())));

          assertThat(e.reason()).isEqualTo(stale.reason());
          return stale.reason();
        },
        EnumSet.of(Reason.TIMESTAMP_TOO_OLD, Reason.TIMESTAMP_TOO_NEW));
  }

  /**
   * A configured secret is either accepted, and then signs and verifies, or refused with an
   * IllegalArgumentException that names its position and never its value.
   */
  @Test
  void anySecretIsAcceptedOrRefusedWithoutEchoingIt() {
    record Configuration(String value, String id, Fresh fresh) {}
    PropertyCheck.forAll(
        1000,
        r -> new Configuration(anySecret(r), id(r), SignatureGenerators.fresh(r)),
        in -> {
          Secret secret = Secret.of(in.value());
          Fresh fresh = in.fresh();
          StandardWebhooksVerifier verifier;
          try {
            verifier =
                new StandardWebhooksVerifier(
                    List.of(secret), fresh.tolerance(), clockAt(fresh.now()));
          } catch (IllegalArgumentException e) {
            assertThat(e.getMessage())
                .matches("secret #1 is (not whsec_<base64> nor base64|empty after decoding)");
            return "refused";
          }
          byte[] body = in.value().getBytes(StandardCharsets.UTF_8);
          String ts = Long.toString(fresh.ts());
          try {
            verifier.verify(
                body,
                HeaderLookup.of(
                    headers(
                        in.id(),
                        ts,
                        StandardWebhooksVerifier.sign(secret, in.id(), fresh.ts(), body))));
          } catch (SignatureException e) {
            fail("an accepted secret must verify its own signature: " + e.code(), e);
          }
          return "accepted";
        },
        Set.of("accepted", "refused"));
  }

  /**
   * The documented outcome of a signature header once the timestamp passed: no well-formed {@code
   * v1,<base64 of 32 bytes>} entry and a malformed one (no comma, nothing before it, or a v1 value
   * that is not base64 of 32 bytes) is {@code MALFORMED_SIGNATURE}; otherwise {@code
   * NO_MATCHING_SIGNATURE}. A generated header never holds a correct signature (2^-256).
   */
  private static Reason expectedSignatureFailure(String header) {
    boolean wellFormedV1 = false;
    boolean malformed = false;
    StringBuilder token = new StringBuilder();
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i <= header.length(); i++) {
      if (i == header.length() || Character.isWhitespace(header.charAt(i))) {
        if (!token.isEmpty()) {
          tokens.add(token.toString());
          token.setLength(0);
        }
      } else {
        token.append(header.charAt(i));
      }
    }
    for (String t : tokens) {
      int comma = t.indexOf(',');
      if (comma <= 0) {
        malformed = true;
      } else if (t.substring(0, comma).equals("v1")) {
        if (decodesTo32Bytes(t.substring(comma + 1))) {
          wellFormedV1 = true;
        } else {
          malformed = true;
        }
      }
    }
    return !wellFormedV1 && malformed ? Reason.MALFORMED_SIGNATURE : Reason.NO_MATCHING_SIGNATURE;
  }

  private static boolean decodesTo32Bytes(String base64) {
    try {
      return Base64.getDecoder().decode(base64).length == 32;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static StandardWebhooksVerifier verifier(
      List<Key> keys, Duration tolerance, Instant now) {
    return new StandardWebhooksVerifier(
        keys.stream().map(Key::secret).toList(), tolerance, clockAt(now));
  }

  /**
   * A request signed by {@code signing} over {@code signedBody}, its id and its fresh timestamp,
   * but sent with {@code sentBody}, is refused: {@code NO_MATCHING_SIGNATURE}.
   */
  private static void assertNoMatchingSignature(
      Signing signing, byte[] signedBody, byte[] sentBody) {
    assertNoMatchingSignature(signing, signedBody, sentBody, signing.id(), signing.timestamp());
  }

  /** The same, sent with {@code sentId} and {@code sentTimestamp} in place of the signed ones. */
  private static void assertNoMatchingSignature(
      Signing signing, byte[] signedBody, byte[] sentBody, String sentId, String sentTimestamp) {
    Fresh fresh = signing.fresh();
    String signature =
        StandardWebhooksVerifier.sign(signing.signer(), signing.id(), fresh.ts(), signedBody);
    StandardWebhooksVerifier verifier = verifier(signing.keys(), fresh.tolerance(), fresh.now());

    SignatureException e = failure(verifier, sentBody, headers(sentId, sentTimestamp, signature));

    assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  private static Map<String, String> headers(String id, String timestamp, String signature) {
    return Map.of(
        StandardWebhooksVerifier.ID_HEADER, id,
        StandardWebhooksVerifier.TIMESTAMP_HEADER, timestamp,
        StandardWebhooksVerifier.SIGNATURE_HEADER, signature);
  }

  // ---- Generators ----

  /** The configured keys, the secret that signs, a message id and a fresh timestamp. */
  record Signing(List<Key> keys, Secret signer, String id, Fresh fresh)
      implements SignatureGenerators.Signed {

    /** The timestamp header it signs. */
    String timestamp() {
      return Long.toString(fresh.ts());
    }
  }

  static Signing signing(Random r) {
    List<Key> keys = keys(r);
    Secret signer = SignatureGenerators.pick(keys, r.nextInt()).secret();
    return new Signing(keys, signer, id(r), SignatureGenerators.fresh(r));
  }

  /** Entries that almost pass: another version or casing, a mangled MAC. */
  private static final List<Function<Random, String>> NEAR_MISSES =
      List.of(
          r -> "v2," + base64OfBytes(r, 32),
          r -> "V1," + base64OfBytes(r, 32),
          r -> "v1," + base64OfBytes(r, 32).substring(1),
          r -> "v1," + base64OfBytes(r, 32).replace('+', '-'));

  /** {@code v1,<base64 of 32 bytes>} entries, separated by whitespace. */
  static final SignatureGenerators.Scheme SCHEME =
      new SignatureGenerators.Scheme(
          "v1,",
          StandardWebhooksVerifierPropertiesTest::base64OfBytes,
          32,
          48,
          NEAR_MISSES,
          List.of("", "v1", ",", ",abc", "v1,", "v1,,", "v1,=", "v1=abc"),
          r -> "v2," + base64OfBytes(r, 32),
          List.of("", "v1", ",", "v1,zz", "v1a,abc"),
          r -> oneOf(r, " ", "  ", "\t", " \t ", "\n"));

  /** Random key bytes (some longer than the 64-byte HMAC block), with or without the prefix. */
  static Key key(Random r) {
    byte[] bytes = bytes(r, 1, 100);
    String prefix = r.nextBoolean() ? StandardWebhooksVerifier.SECRET_PREFIX : "";
    return new Key(bytes, Secret.of(prefix + Base64.getEncoder().encodeToString(bytes)));
  }

  static List<Key> keys(Random r) {
    return SignatureGenerators.rotation(r, StandardWebhooksVerifierPropertiesTest::key);
  }

  static Key otherKey(Random r, List<Key> configured) {
    return SignatureGenerators.otherKey(
        r, configured, StandardWebhooksVerifierPropertiesTest::key, Key::bytes);
  }

  /** Secrets as an operator might mistype them: base64-ish, prefixed or not, or any text. */
  static String anySecret(Random r) {
    String base64ish = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ ";
    while (true) {
      String s =
          switch (r.nextInt(4)) {
            case 0 -> chars(r, base64ish, 1, 60);
            case 1 -> StandardWebhooksVerifier.SECRET_PREFIX + chars(r, base64ish, 1, 60);
            case 2 -> oneOf(r, "whsec_", "whsec_=", "====", "A", "AA==", "whsec_AA==");
            default -> SignatureGenerators.text(r, 1, 40);
          };
      if (!s.isBlank()) {
        return s;
      }
    }
  }

  /** Message ids as a sender sends them: non-blank, no surrounding whitespace. */
  static String id(Random r) {
    String alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    while (true) {
      String s =
          r.nextBoolean()
              ? "msg_" + chars(r, alphanumeric, 1, 30)
              : SignatureGenerators.text(r, 1, 40);
      if (!s.isBlank() && s.trim().equals(s)) {
        return s;
      }
    }
  }

  static String anyId(Random r) {
    return r.nextBoolean() ? id(r) : SignatureGenerators.anyHeaderValue(r);
  }

  private static String base64OfBytes(Random r, int length) {
    return Base64.getEncoder().encodeToString(bytes(r, length, length));
  }
}
