package dev.runlane.ingress.publish;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * What the ingress knows about a request besides its body, carried into record headers.
 *
 * @param source the configured source (route), e.g. {@code sume}
 * @param receivedAt when the request arrived (the record timestamp)
 * @param signatureHeaders the scheme's HTTP headers that were present, by name as the scheme spells
 *     them (copied as {@code http.<lower-case name>})
 */
public record Inbound(String source, Instant receivedAt, Map<String, String> signatureHeaders) {

  public Inbound {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(receivedAt, "receivedAt");
    signatureHeaders = Map.copyOf(signatureHeaders);
  }
}
