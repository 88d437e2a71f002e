package dev.runlane.common.envelope;

import dev.runlane.common.envelope.EnvelopeException.Reason;

/**
 * The text of a field the envelope keeps: Unicode that has a UTF-8 form and, for the fields that
 * become keys and columns downstream, that every store can hold.
 */
final class FieldText {
  private FieldText() {}

  /**
   * Refuses a field value with an unpaired surrogate. The body is checked to be UTF-8 before it is
   * read, but an escaped lone surrogate ({@code \\ud800}) is valid UTF-8 and JSON, and Jackson
   * decodes it into an unpaired surrogate. Such a value has no UTF-8 form: written as the Kafka key
   * (the run id), a record header or a Redis key, each unpaired surrogate becomes '?', so distinct
   * ids collide, and the processor dead-letters the record as key_mismatch (the key it reads is not
   * the run id it parses) after the ingress accepted it.
   *
   * <p>With {@code limits} (the request id, run id and type, read by a parser with the storage
   * limits), the value is also refused when it holds U+0000 (an escaped {@code \\u0000} is valid
   * JSON, but PostgreSQL text cannot hold it, so the sink's database would refuse the event for
   * ever) or is longer than {@link EnvelopeParser#MAX_FIELD_BYTES} bytes of UTF-8. A lone surrogate
   * is reported first, whatever else the value holds. One pass over the chars, nothing allocated
   * unless the value is refused.
   *
   * @param field the field's JSON Pointer, for the exception
   * @return {@code value}
   */
  static String requireStorable(String field, String value, boolean limits)
      throws EnvelopeException {
    int n = value.length();
    int bytes = 0;
    int nulAt = -1;
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c < 0x80) {
        bytes++;
        if (c == 0 && nulAt < 0) {
          nulAt = i;
        }
      } else if (c < 0x800) {
        bytes += 2;
      } else if (!Character.isSurrogate(c)) {
        bytes += 3;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        throw new EnvelopeException(
            Reason.NOT_JSON,
            field,
            "field " + field + " is not Unicode text (invalid UTF-8 or a lone surrogate)");
      }
    }
    if (limits) {
      if (nulAt >= 0) {
        throw new EnvelopeException(
            Reason.UNSTORABLE_FIELD,
            field,
            "field "
                + field
                + " holds U+0000 (NUL) at char "
                + nulAt
                + ", which PostgreSQL text cannot store");
      }
      if (bytes > EnvelopeParser.MAX_FIELD_BYTES) {
        throw new EnvelopeException(
            Reason.UNSTORABLE_FIELD,
            field,
            "field "
                + field
                + " is "
                + bytes
                + " bytes of UTF-8, over the "
                + EnvelopeParser.MAX_FIELD_BYTES
                + " an id or type may take");
      }
    }
    return value;
  }
}
