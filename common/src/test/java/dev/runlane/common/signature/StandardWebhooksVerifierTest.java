package dev.runlane.common.signature;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.runlane.common.config.Secret;
import dev.runlane.common.signature.SignatureException.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Vectors and negative cases of the Standard Webhooks reference libraries. */
class StandardWebhooksVerifierTest {

  private static final Secret SECRET = Secret.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  private static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  private static final long TS = 1614265330L;
  private static final byte[] PAYLOAD = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
  private static final String EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  private static final String OTHER_SIG = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
  private static final Duration TOLERANCE = Duration.ofMinutes(5);

  private final StandardWebhooksVerifier verifier = verifierAt(TS);

  @Test
  void signsTheSpecVector() {
    assertThat(StandardWebhooksVerifier.sign(SECRET, ID, TS, PAYLOAD)).isEqualTo(EXPECTED);
  }

  @Test
  void verifiesTheSpecVector() {
    assertThatCode(() -> verifier.verify(PAYLOAD, headers(ID, TS, EXPECTED)))
        .doesNotThrowAnyException();
  }

  @Test
  void verifiesWithSecretWithoutPrefix() {
    assertVerifiesTheSpecVector(List.of(Secret.of("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")));
  }

  @Test
  void verifiesWithSecondSecret() {
    assertVerifiesTheSpecVector(List.of(Secret.of("whsec_" + "A".repeat(32)), SECRET));
  }

  @Test
  void acceptsMultipleSignaturesWithOneValid() {
    String header =
        String.join(
            " ", OTHER_SIG, "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", EXPECTED, OTHER_SIG);

    assertThatCode(() -> verifier.verify(PAYLOAD, headers(ID, TS, header)))
        .doesNotThrowAnyException();
  }

  @Test
  void rejectsWrongId() {
    assertThat(reason(headers("msg_other", TS, EXPECTED))).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsWrongTimestamp() {
    StandardWebhooksVerifier later = verifierAt(TS + 1);

    SignatureException e =
        catchThrowableOfType(
            SignatureException.class, () -> later.verify(PAYLOAD, headers(ID, TS + 1, EXPECTED)));

    assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsTamperedPayload() {
    byte[] tampered = "{\"test\": 2432232315}".getBytes(StandardCharsets.UTF_8);

    SignatureException e =
        catchThrowableOfType(
            SignatureException.class, () -> verifier.verify(tampered, headers(ID, TS, EXPECTED)));

    assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsTimestampOlderThanTolerance() {
    long old = TS - TOLERANCE.toSeconds() - 1;
    String sig = StandardWebhooksVerifier.sign(SECRET, ID, old, PAYLOAD);

    assertThat(reason(headers(ID, old, sig))).isEqualTo(Reason.TIMESTAMP_TOO_OLD);
  }

  @Test
  void rejectsTimestampNewerThanTolerance() {
    long future = TS + TOLERANCE.toSeconds() + 1;
    String sig = StandardWebhooksVerifier.sign(SECRET, ID, future, PAYLOAD);

    assertThat(reason(headers(ID, future, sig))).isEqualTo(Reason.TIMESTAMP_TOO_NEW);
  }

  @Test
  void acceptsTimestampExactlyAtTolerance() {
    long old = TS - TOLERANCE.toSeconds();
    String sig = StandardWebhooksVerifier.sign(SECRET, ID, old, PAYLOAD);

    assertThatCode(() -> verifier.verify(PAYLOAD, headers(ID, old, sig)))
        .doesNotThrowAnyException();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        StandardWebhooksVerifier.ID_HEADER,
        StandardWebhooksVerifier.TIMESTAMP_HEADER,
        StandardWebhooksVerifier.SIGNATURE_HEADER
      })
  void rejectsAMissingHeader(String header) {
    assertThat(reason(without(header))).isEqualTo(Reason.MISSING_HEADER);
  }

  @Test
  void rejectsInvalidTimestamp() {
    SignatureException e =
        failure(
            HeaderLookup.of(
                Map.of(
                    StandardWebhooksVerifier.ID_HEADER, ID,
                    StandardWebhooksVerifier.TIMESTAMP_HEADER, "hello",
                    StandardWebhooksVerifier.SIGNATURE_HEADER, EXPECTED)));

    assertThat(e.reason()).isEqualTo(Reason.MALFORMED_TIMESTAMP);
    assertThat(e.getCause()).isInstanceOf(NumberFormatException.class);
  }

  @Test
  void rejectsOnlyOtherVersionAsNoMatch() {
    String v2 = "v2," + EXPECTED.substring(3);

    assertThat(reason(headers(ID, TS, v2))).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsValidSignatureOfAnotherMessage() {
    assertThat(reason(headers(ID, TS, OTHER_SIG))).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsGarbageSignatureAsMalformed() {
    assertThat(reason(headers(ID, TS, "v1,dawfeoifkpqwoekfpqoekf")))
        .isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsPartialSignatureAsMalformed() {
    assertThat(reason(headers(ID, TS, "v1,"))).isEqualTo(Reason.MALFORMED_SIGNATURE);
    assertThat(reason(headers(ID, TS, EXPECTED.substring(0, EXPECTED.length() - 5))))
        .isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsSumeFormatAsMalformed() {
    assertThat(reason(headers(ID, TS, "v1=" + "ab".repeat(32))))
        .isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsNonBase64SecretWithoutEchoingIt() {
    assertThatThrownBy(
            () ->
                new StandardWebhooksVerifier(
                    List.of(Secret.of("whsec_not base64!!")), TOLERANCE, clockAt(TS)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("secret #1")
        .hasMessageNotContaining("not base64!!");
  }

  @Test
  void describesItsScheme() {
    assertThat(verifier.scheme()).isEqualTo("standard-webhooks");
    assertThat(verifier.headerNames())
        .containsExactly("webhook-id", "webhook-timestamp", "webhook-signature");
  }

  /** A verifier of {@code secrets}, at the vector's time, verifies the spec's test vector. */
  private static void assertVerifiesTheSpecVector(List<Secret> secrets) {
    StandardWebhooksVerifier configured =
        new StandardWebhooksVerifier(secrets, TOLERANCE, clockAt(TS));

    assertThatCode(() -> configured.verify(PAYLOAD, headers(ID, TS, EXPECTED)))
        .doesNotThrowAnyException();
  }

  private Reason reason(HeaderLookup headers) {
    return failure(headers).reason();
  }

  private SignatureException failure(HeaderLookup headers) {
    return Verifications.failure(verifier, PAYLOAD, headers);
  }

  private static HeaderLookup without(String header) {
    Map<String, String> h = new HashMap<>();
    h.put(StandardWebhooksVerifier.ID_HEADER, ID);
    h.put(StandardWebhooksVerifier.TIMESTAMP_HEADER, Long.toString(TS));
    h.put(StandardWebhooksVerifier.SIGNATURE_HEADER, EXPECTED);
    h.remove(header);
    return HeaderLookup.of(h);
  }

  private static HeaderLookup headers(String id, long ts, String signature) {
    return HeaderLookup.of(
        Map.of(
            StandardWebhooksVerifier.ID_HEADER, id,
            StandardWebhooksVerifier.TIMESTAMP_HEADER, Long.toString(ts),
            StandardWebhooksVerifier.SIGNATURE_HEADER, signature));
  }

  private static StandardWebhooksVerifier verifierAt(long now) {
    return new StandardWebhooksVerifier(List.of(SECRET), TOLERANCE, clockAt(now));
  }

  private static Clock clockAt(long epochSecond) {
    return Clock.fixed(Instant.ofEpochSecond(epochSecond), ZoneOffset.UTC);
  }
}
