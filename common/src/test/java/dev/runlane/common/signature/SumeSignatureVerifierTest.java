package dev.runlane.common.signature;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
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

class SumeSignatureVerifierTest {

  private static final String TIMESTAMP = SumeSignatureVerifier.TIMESTAMP_HEADER;
  private static final String SIGNATURE = SumeSignatureVerifier.SIGNATURE_HEADER;
  private static final String EVENT_ID = SumeSignatureVerifier.EVENT_ID_HEADER;
  private static final long NOW = 1_764_410_400L;
  private static final Clock CLOCK = Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC);
  private static final Duration TOLERANCE = Duration.ofSeconds(300);
  private static final Secret CURRENT = Secret.of("current-secret");
  private static final Secret PREVIOUS = Secret.of("previous-secret");
  private static final byte[] BODY =
      "{\"request_id\":\"r1\",\"run_id\":\"u1\",\"created_at\":\"2026-11-29T10:00:00Z\"}"
          .getBytes(StandardCharsets.UTF_8);

  private final SumeSignatureVerifier verifier =
      new SumeSignatureVerifier(List.of(CURRENT), TOLERANCE, CLOCK);

  @Test
  void acceptsValidSignature() {
    assertThatCode(
            () ->
                verifier.verify(BODY, headers(NOW, SumeSignatureVerifier.sign(CURRENT, NOW, BODY))))
        .doesNotThrowAnyException();
  }

  @Test
  void signMatchesIndependentHmacComputation() throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(CURRENT.utf8(), "HmacSHA256"));
    byte[] expected =
        mac.doFinal(
            (NOW + "." + new String(BODY, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8));

    assertThat(SumeSignatureVerifier.sign(CURRENT, NOW, BODY))
        .isEqualTo("v1=" + java.util.HexFormat.of().formatHex(expected));
  }

  @Test
  void acceptsSignatureMadeWithSecondSecret() {
    SumeSignatureVerifier rotating =
        new SumeSignatureVerifier(List.of(CURRENT, PREVIOUS), TOLERANCE, CLOCK);

    assertThatCode(
            () ->
                rotating.verify(
                    BODY, headers(NOW, SumeSignatureVerifier.sign(PREVIOUS, NOW, BODY))))
        .doesNotThrowAnyException();
  }

  @Test
  void acceptsWhenSecondOfSeveralSignaturesMatches() {
    String header =
        SumeSignatureVerifier.sign(Secret.of("unknown"), NOW, BODY)
            + ", "
            + SumeSignatureVerifier.sign(CURRENT, NOW, BODY);

    assertThatCode(() -> verifier.verify(BODY, headers(NOW, header))).doesNotThrowAnyException();
  }

  @Test
  void ignoresUnknownVersions() {
    String header = "v0=abc, " + SumeSignatureVerifier.sign(CURRENT, NOW, BODY);

    assertThatCode(() -> verifier.verify(BODY, headers(NOW, header))).doesNotThrowAnyException();
  }

  @Test
  void acceptsUpperCaseHexAndAnyHeaderCase() {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);
    String upper = "v1=" + sig.substring(3).toUpperCase(java.util.Locale.ROOT);
    HeaderLookup lower =
        HeaderLookup.of(Map.of("x-sume-timestamp", Long.toString(NOW), "X-SUME-SIGNATURE", upper));

    assertThatCode(() -> verifier.verify(BODY, lower)).doesNotThrowAnyException();
  }

  @Test
  void acceptsTimestampExactlyAtTolerance() {
    long old = NOW - 300;
    long future = NOW + 300;

    assertThatCode(
            () ->
                verifier.verify(BODY, headers(old, SumeSignatureVerifier.sign(CURRENT, old, BODY))))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                verifier.verify(
                    BODY, headers(future, SumeSignatureVerifier.sign(CURRENT, future, BODY))))
        .doesNotThrowAnyException();
  }

  @Test
  void rejectsTimestampOlderThanTolerance() {
    long ts = NOW - 301;

    assertThat(reason(headers(ts, SumeSignatureVerifier.sign(CURRENT, ts, BODY))))
        .isEqualTo(Reason.TIMESTAMP_TOO_OLD);
  }

  @Test
  void rejectsTimestampNewerThanTolerance() {
    long ts = NOW + 301;

    assertThat(reason(headers(ts, SumeSignatureVerifier.sign(CURRENT, ts, BODY))))
        .isEqualTo(Reason.TIMESTAMP_TOO_NEW);
  }

  @Test
  void rejectsMissingTimestampHeader() {
    Map<String, String> h = new HashMap<>();
    h.put(SIGNATURE, SumeSignatureVerifier.sign(CURRENT, NOW, BODY));

    assertThat(reason(HeaderLookup.of(h))).isEqualTo(Reason.MISSING_HEADER);
  }

  @Test
  void rejectsMissingSignatureHeader() {
    assertThat(reason(HeaderLookup.of(Map.of(TIMESTAMP, "" + NOW))))
        .isEqualTo(Reason.MISSING_HEADER);
  }

  @Test
  void rejectsBlankSignatureHeaderAsMissing() {
    assertThat(reason(headers(NOW, "  "))).isEqualTo(Reason.MISSING_HEADER);
  }

  @Test
  void rejectsMalformedTimestampWithCause() {
    SignatureException e =
        failure(
            HeaderLookup.of(
                Map.of(
                    TIMESTAMP,
                    "2026-11-29T10:00:00Z",
                    SIGNATURE,
                    SumeSignatureVerifier.sign(CURRENT, NOW, BODY))));

    assertThat(e.reason()).isEqualTo(Reason.MALFORMED_TIMESTAMP);
    assertThat(e.code()).isEqualTo("malformed_timestamp");
    assertThat(e.getCause()).isInstanceOf(NumberFormatException.class);
  }

  @Test
  void rejectsSignedTimestamp() {
    assertThat(reason(header(TIMESTAMP, "+" + NOW))).isEqualTo(Reason.MALFORMED_TIMESTAMP);
  }

  @Test
  void rejectsNonAsciiDigitInTimestamp() {
    // Long.parseLong reads U+0667 (Arabic-Indic seven) as 7, i.e. this as NOW.
    String now = Long.toString(NOW);
    String arabicSeven = now.charAt(0) + "\u0667" + now.substring(2);

    assertThat(reason(header(TIMESTAMP, arabicSeven))).isEqualTo(Reason.MALFORMED_TIMESTAMP);
  }

  @Test
  void rejectsModifiedBody() {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);
    byte[] modified = BODY.clone();
    modified[modified.length - 3] = 'X';

    SignatureException e =
        catchThrowableOfType(
            SignatureException.class, () -> verifier.verify(modified, headers(NOW, sig)));

    assertThat(e.reason()).isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsSignatureOfAnotherTimestamp() {
    assertThat(reason(headers(NOW, SumeSignatureVerifier.sign(CURRENT, NOW - 1, BODY))))
        .isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsSignatureWithUnknownSecret() {
    assertThat(reason(headers(NOW, SumeSignatureVerifier.sign(Secret.of("other"), NOW, BODY))))
        .isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsOnlyUnknownVersionsAsNoMatch() {
    String hex = SumeSignatureVerifier.sign(CURRENT, NOW, BODY).substring(3);

    assertThat(reason(headers(NOW, "v0=" + hex + ",v2=" + hex)))
        .isEqualTo(Reason.NO_MATCHING_SIGNATURE);
  }

  @Test
  void rejectsBareHexAsMalformed() {
    String hex = SumeSignatureVerifier.sign(CURRENT, NOW, BODY).substring(3);

    assertThat(reason(headers(NOW, hex))).isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsStandardWebhooksFormatAsMalformed() {
    assertThat(reason(headers(NOW, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")))
        .isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsTruncatedHexAsMalformed() {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);

    assertThat(reason(headers(NOW, sig.substring(0, sig.length() - 2))))
        .isEqualTo(Reason.MALFORMED_SIGNATURE);
  }

  @Test
  void rejectsSignatureInTimestampHeader() {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);

    HeaderLookup swapped = HeaderLookup.of(Map.of(TIMESTAMP, sig, SIGNATURE, "" + NOW));

    assertThat(reason(swapped)).isEqualTo(Reason.MALFORMED_TIMESTAMP);
  }

  @Test
  void rejectsSignatureInEventIdHeaderOnly() {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);

    HeaderLookup misplaced = HeaderLookup.of(Map.of(TIMESTAMP, "" + NOW, EVENT_ID, sig));

    assertThat(reason(misplaced)).isEqualTo(Reason.MISSING_HEADER);
  }

  @Test
  void describesItsScheme() {
    assertThat(verifier.scheme()).isEqualTo("sume");
    assertThat(verifier.headerNames())
        .containsExactly("X-Sume-Event-Id", "X-Sume-Timestamp", "X-Sume-Signature");
  }

  @Test
  void messagesNeverContainTheSecretOrExpectedSignature() {
    SignatureException e =
        failure(headers(NOW, SumeSignatureVerifier.sign(Secret.of("x"), NOW, BODY)));

    assertThat(e.getMessage())
        .doesNotContain(CURRENT.reveal())
        .doesNotContain(SumeSignatureVerifier.sign(CURRENT, NOW, BODY).substring(3));
  }

  @Test
  void worksFromManyThreads() throws Exception {
    String sig = SumeSignatureVerifier.sign(CURRENT, NOW, BODY);
    List<Thread> threads = new java.util.ArrayList<>();
    java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
    for (int t = 0; t < 4; t++) {
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < 500; i++) {
                  try {
                    verifier.verify(BODY, headers(NOW, sig));
                    ok.incrementAndGet();
                  } catch (SignatureException e) {
                    throw new AssertionError(e);
                  }
                }
              });
      thread.start();
      threads.add(thread);
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(ok).hasValue(2000);
  }

  private Reason reason(HeaderLookup headers) {
    return failure(headers).reason();
  }

  private SignatureException failure(HeaderLookup headers) {
    return Verifications.failure(verifier, BODY, headers);
  }

  private static HeaderLookup header(String name, String value) {
    return HeaderLookup.of(
        Map.of(name, value, SIGNATURE, SumeSignatureVerifier.sign(CURRENT, NOW, BODY)));
  }

  private static HeaderLookup headers(long ts, String signature) {
    return HeaderLookup.of(
        Map.of(TIMESTAMP, Long.toString(ts), SIGNATURE, signature, EVENT_ID, "evt_1"));
  }
}
