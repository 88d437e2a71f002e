package dev.runlane.common.signature;

import java.util.Locale;
import java.util.Objects;

/**
 * A request whose signature does not verify. The message is for logs; it never contains a secret or
 * an expected signature. The ingress answers 401 and tags its metrics with {@link #code()}.
 */
public final class SignatureException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Why verification failed. */
  public enum Reason {
    /** A required signature header is absent or blank. */
    MISSING_HEADER,
    /** The timestamp header is not a Unix time in seconds. */
    MALFORMED_TIMESTAMP,
    /** The timestamp is older than now minus the tolerance. */
    TIMESTAMP_TOO_OLD,
    /** The timestamp is newer than now plus the tolerance. */
    TIMESTAMP_TOO_NEW,
    /** The signature header has no usable signature of a known version, and a malformed entry. */
    MALFORMED_SIGNATURE,
    /** No signature of a known version matches any configured secret. */
    NO_MATCHING_SIGNATURE
  }

  private final Reason reason;

  public SignatureException(Reason reason, String message) {
    this(reason, message, null);
  }

  public SignatureException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }

  /**
   * A stable code for metrics tags and logs: the reason in lower case, e.g. {@code
   * timestamp_too_old}.
   */
  public String code() {
    return reason.name().toLowerCase(Locale.ROOT);
  }
}
