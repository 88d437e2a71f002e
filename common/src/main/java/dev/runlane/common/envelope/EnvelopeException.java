package dev.runlane.common.envelope;

import java.util.Locale;
import java.util.Objects;

/**
 * A body that cannot be read as an envelope. Retrying cannot fix it: the ingress writes such a body
 * to the dead-letter topic with {@link #code()} as the reason.
 */
public final class EnvelopeException extends Exception {
  private static final long serialVersionUID = 1L;

  /** What is wrong with the body. */
  public enum Reason {
    /**
     * Not JSON: empty, not UTF-8, a syntax error, truncated, trailing content, an ambiguous
     * duplicate, or a field that is not Unicode text (an escaped lone surrogate).
     */
    NOT_JSON,
    /** Valid JSON whose root is not an object. */
    NOT_AN_OBJECT,
    /** A required field is absent or JSON null. */
    MISSING_FIELD,
    /** A field is present but not a non-empty string. */
    WRONG_TYPE,
    /** {@code created_at} is not an RFC 3339 timestamp with an offset. */
    BAD_TIMESTAMP,
    /** Nested deeper than the parser allows. */
    TOO_DEEP,
    /**
     * {@code request_id}, the run id or {@code type} is Unicode text that a store downstream cannot
     * hold: it contains U+0000, or it is longer than {@link EnvelopeParser#MAX_FIELD_BYTES} bytes
     * of UTF-8 (PostgreSQL text refuses the one, its btree indexes the other).
     */
    UNSTORABLE_FIELD
  }

  private final Reason reason;
  private final String field;

  /**
   * @param reason what is wrong
   * @param field the JSON Pointer of the field concerned, or null
   * @param message which field and what is wrong; never more than a short excerpt of the input
   */
  public EnvelopeException(Reason reason, String field, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.field = field;
  }

  /**
   * @param cause the parser's exception, kept for logs
   */
  public EnvelopeException(Reason reason, String field, String message, Throwable cause) {
    super(message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.field = field;
  }

  public Reason reason() {
    return reason;
  }

  /** The JSON Pointer of the field concerned, or null when the problem is the whole body. */
  public String field() {
    return field;
  }

  /**
   * A stable code for metrics tags and DLQ headers: the reason in lower case, e.g. {@code
   * missing_field}.
   */
  public String code() {
    return reason.name().toLowerCase(Locale.ROOT);
  }
}
