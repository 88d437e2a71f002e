package dev.runlane.common.signature;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.runlane.common.signature.SignatureException.Reason;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The shared pieces under both schemes: hex decoding, timestamp parsing. */
class HmacTest {

  private static final HexFormat HEX = HexFormat.of();
  private static final String DIGITS = "0123456789abcdefABCDEF";

  @Test
  void rejectsAnEmptyKeyLikeTheJce() {
    assertThatThrownBy(() -> new Hmac(List.of(new byte[0])))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void unhexDecodesBothCases() {
    byte[] bytes = new byte[32];
    new SplittableRandom(3).nextBytes(bytes);
    String lower = HEX.formatHex(bytes);

    assertThat(Hmac.unhex("v1=" + lower, 3, 67, 32)).isEqualTo(bytes);
    assertThat(Hmac.unhex(lower.toUpperCase(java.util.Locale.ROOT), 0, 64, 32)).isEqualTo(bytes);
  }

  @Test
  void unhexRejectsEveryOtherCharacterAsEitherDigitOfAByte() {
    String valid = "0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcdefABCD";
    for (int code = Character.MIN_VALUE; code <= Character.MAX_VALUE; code++) {
      char c = (char) code;
      boolean hex = DIGITS.indexOf(c) >= 0;
      for (int position : new int[] {0, 1, 62, 63}) { // high and low digit, first and last byte
        String s = valid.substring(0, position) + c + valid.substring(position + 1);
        assertThat(Hmac.unhex(s, 0, 64, 32) != null)
            .as("U+%04X at %d", code, position)
            .isEqualTo(hex);
      }
    }
  }

  @Test
  void unhexRejectsTheWrongLength() {
    assertThat(Hmac.unhex("ab".repeat(31), 0, 62, 32)).isNull();
    assertThat(Hmac.unhex("ab".repeat(33), 0, 66, 32)).isNull();
  }

  @Test
  void parsesAsciiDigits() throws SignatureException {
    assertThat(Hmac.parseTimestamp("1796000000", "ts")).isEqualTo(1_796_000_000L);
    assertThat(Hmac.parseTimestamp("0", "ts")).isZero();
    assertThat(Hmac.parseTimestamp("000042", "ts")).isEqualTo(42);
    assertThat(Hmac.parseTimestamp("999999999999999999", "ts")).isEqualTo(999_999_999_999_999_999L);
    assertThat(Hmac.parseTimestamp("9223372036854775807", "ts")).isEqualTo(Long.MAX_VALUE);
    assertThat(Hmac.parseTimestamp("0000000000000000000042", "ts")).isEqualTo(42);
  }

  @Test
  void rejectsOverflowWithCause() {
    SignatureException e = malformed("9223372036854775808");

    assertThat(e.getCause()).isInstanceOf(NumberFormatException.class);
  }

  @Test
  void rejectsSignsEmptyAndInnerWhitespace() {
    for (String value : new String[] {"+1796000000", "-1", "", "1796 000000", "1796000000s"}) {
      assertThat(malformed(value).reason()).as("'%s'", value).isEqualTo(Reason.MALFORMED_TIMESTAMP);
    }
  }

  @Test
  void rejectsNonAsciiDigitsThatParseLongAccepts() {
    // U+0661..U+0669 are Arabic-Indic digits; Long.parseLong reads "1\u0667..." as a number.
    assertThat(Long.parseLong("1\u0667\u0669\u0666000000")).isEqualTo(1_796_000_000L);

    assertThat(malformed("1\u0667\u0669\u0666000000").reason())
        .isEqualTo(Reason.MALFORMED_TIMESTAMP);
    // Too long for the digit-by-digit path (19 characters), still within a long.
    assertThat(malformed("1\u0667\u0669\u0666" + "0".repeat(15)).reason())
        .isEqualTo(Reason.MALFORMED_TIMESTAMP);
  }

  private static SignatureException malformed(String value) {
    SignatureException e =
        catchThrowableOfType(SignatureException.class, () -> Hmac.parseTimestamp(value, "ts"));
    assertThat(e).as("'%s' should be rejected", value).isNotNull();
    assertThat(e.reason()).isEqualTo(Reason.MALFORMED_TIMESTAMP);
    return e;
  }
}
