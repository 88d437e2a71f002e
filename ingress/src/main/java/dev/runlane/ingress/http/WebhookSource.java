package dev.runlane.ingress.http;

import dev.runlane.common.signature.SignatureVerifier;
import java.util.Objects;

/**
 * A configured webhook source: its name (the {@code source} header and metrics tag), its path, and
 * how its requests are signed.
 */
public record WebhookSource(String name, String path, SignatureVerifier verifier) {

  public WebhookSource {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(verifier, "verifier");
  }

  /** {@code POST /webhooks/<name>}. */
  public static WebhookSource of(String name, SignatureVerifier verifier) {
    return new WebhookSource(name, "/webhooks/" + name, verifier);
  }
}
