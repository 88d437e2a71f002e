package dev.runlane.common.signature;

import java.util.List;

/**
 * Verifies a webhook signature over the raw body bytes. Implementations are thread-safe and
 * allocate no MAC per call.
 */
public interface SignatureVerifier {

  /**
   * @param rawBody the body exactly as received (never re-serialized JSON)
   * @param headers the request headers, case-insensitive
   * @throws SignatureException when the request is not authentic or not fresh
   */
  void verify(byte[] rawBody, HeaderLookup headers) throws SignatureException;

  /** The scheme's name, e.g. {@code sume}, for logs and metrics tags. */
  String scheme();

  /** The headers of the scheme, to copy into Kafka record headers for audit and re-verification. */
  List<String> headerNames();
}
