package dev.runlane.common.envelope;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** The check that a body is well-formed UTF-8, made before it is read as JSON. */
final class Utf8 {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Utf8() {}

  /**
   * The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629, Unicode table
   * 3-7), or -1 if there is none.
   *
   * <p>Checked before Jackson reads the body, because JSON between systems must be UTF-8 (RFC 8259
   * §8.1) and the raw bytes travel on as the record value, while Jackson accepts others: it guesses
   * UTF-16 or UTF-32 from a zero byte among the first four (so a zero byte there counts as not
   * UTF-8 here: raw NUL is never valid JSON), and decodes overlong forms, UTF-8-encoded surrogates
   * and code points above U+10FFFF without complaint (BadInputAtVolumeIT sent each of them, and
   * each was accepted and written to the topic).
   */
  static int firstMalformedByte(byte[] b) {
    int n = b.length;
    for (int i = 0; i < Math.min(4, n); i++) {
      if (b[i] == 0) {
        return i;
      }
    }
    int i = 0;
    while (i < n) {
      if (i + 8 <= n && ((long) LONGS.get(b, i) & 0x8080808080808080L) == 0) {
        i += 8; // eight ASCII bytes
        continue;
      }
      int c = b[i] & 0xFF;
      if (c < 0x80) {
        i++;
        continue;
      }
      int length;
      int low = 0x80; // the range of the second byte; the others are always 0x80-0xBF
      int high = 0xBF;
      if (c < 0xC2) {
        return i; // a continuation byte, or the lead of an overlong two-byte form
      } else if (c < 0xE0) {
        length = 2;
      } else if (c < 0xF0) {
        length = 3;
        if (c == 0xE0) {
          low = 0xA0; // overlong
        } else if (c == 0xED) {
          high = 0x9F; // a surrogate
        }
      } else if (c < 0xF5) {
        length = 4;
        if (c == 0xF0) {
          low = 0x90; // overlong
        } else if (c == 0xF4) {
          high = 0x8F; // above U+10FFFF
        }
      } else {
        return i;
      }
      if (i + length > n) {
        return i;
      }
      int second = b[i + 1] & 0xFF;
      if (second < low || second > high) {
        return i;
      }
      for (int k = 2; k < length; k++) {
        if ((b[i + k] & 0xC0) != 0x80) {
          return i;
        }
      }
      i += length;
    }
    return -1;
  }
}
