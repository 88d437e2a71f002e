package dev.runlane.common.signature;

import static org.assertj.core.api.Assertions.fail;

import java.util.Map;

/** How the verifiers' tests present a request: one they expect to fail, or one to verify. */
final class Verifications {

  private Verifications() {}

  /** The verifier's failure; any other exception escapes and fails the test. */
  static SignatureException failure(SignatureVerifier verifier, byte[] body, HeaderLookup headers) {
    try {
      verifier.verify(body, headers);
    } catch (SignatureException e) {
      return e;
    }
    return fail("expected a SignatureException, the request verified");
  }

  static SignatureException failure(
      SignatureVerifier verifier, byte[] body, Map<String, String> headers) {
    return failure(verifier, body, HeaderLookup.of(headers));
  }

  static void assertVerifies(SignatureVerifier verifier, byte[] body, HeaderLookup headers) {
    try {
      verifier.verify(body, headers);
    } catch (SignatureException e) {
      fail("expected to verify, failed with " + e.code() + ": " + e.getMessage(), e);
    }
  }
}
