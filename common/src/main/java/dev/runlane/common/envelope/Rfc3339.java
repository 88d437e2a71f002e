package dev.runlane.common.envelope;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

/** Reads the envelope's {@code created_at}: an RFC 3339 timestamp with its offset. */
final class Rfc3339 {
  /** Where the fraction starts, or the offset when there is none: after {@code ...hh:mm:ss}. */
  private static final int AFTER_SECONDS = 19;

  private Rfc3339() {}

  /**
   * Parses an RFC 3339 date-time with a mandatory offset ({@code Z} or {@code ±hh:mm}), a {@code T}
   * (or {@code t}) separator, seconds, and an optional fraction (digits beyond nanoseconds are
   * truncated). A leap second (60) is not representable and rejected.
   *
   * @return the instant, or null if {@code text} is not such a timestamp
   */
  static Instant parse(String text) {
    int n = text.length();
    if (n < 20
        || text.charAt(4) != '-'
        || text.charAt(7) != '-'
        || (text.charAt(10) != 'T' && text.charAt(10) != 't')
        || text.charAt(13) != ':'
        || text.charAt(16) != ':') {
      return null;
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 2);
    int day = digits(text, 8, 2);
    int hour = digits(text, 11, 2);
    int minute = digits(text, 14, 2);
    int second = digits(text, 17, 2);
    if (year < 0
        || month < 1
        || month > 12
        || day < 1
        || hour < 0
        || hour > 23
        || minute < 0
        || minute > 59
        || second < 0
        || second > 59) {
      return null;
    }
    int offsetAt = fractionEnd(text);
    Integer offsetSeconds = offsetAt < 0 ? null : offsetSeconds(text, offsetAt);
    if (offsetSeconds == null) {
      return null;
    }
    long epochDay;
    try {
      epochDay = LocalDate.of(year, month, day).toEpochDay();
    } catch (DateTimeException e) {
      return null;
    }
    long seconds = epochDay * 86_400L + hour * 3600L + minute * 60L + second - offsetSeconds;
    return Instant.ofEpochSecond(seconds, nanos(text, offsetAt));
  }

  /**
   * Where the fraction of seconds ends: {@link #AFTER_SECONDS} when there is none, -1 when a {@code
   * .} has no digit after it.
   */
  private static int fractionEnd(String text) {
    if (text.charAt(AFTER_SECONDS) != '.') {
      return AFTER_SECONDS;
    }
    int i = AFTER_SECONDS + 1;
    while (i < text.length() && isDigit(text.charAt(i))) {
      i++;
    }
    return i == AFTER_SECONDS + 1 ? -1 : i;
  }

  /** The fraction of seconds that ends at {@code end}, in nanoseconds; digits past 9 dropped. */
  private static int nanos(String text, int end) {
    int nanos = 0;
    int start = AFTER_SECONDS + 1;
    int count = Math.max(0, end - start);
    for (int i = start; i < start + Math.min(count, 9); i++) {
      nanos = nanos * 10 + (text.charAt(i) - '0');
    }
    for (int k = count; k < 9; k++) {
      nanos *= 10;
    }
    return nanos;
  }

  /**
   * The offset that starts at {@code i} and ends the text ({@code Z}, {@code z} or {@code ±hh:mm}),
   * in seconds east of UTC; null if there is none.
   */
  private static Integer offsetSeconds(String text, int i) {
    int n = text.length();
    if (i >= n) {
      return null;
    }
    char c = text.charAt(i);
    if (c == 'Z' || c == 'z') {
      return i + 1 == n ? 0 : null;
    }
    if ((c == '+' || c == '-') && i + 6 == n && text.charAt(i + 3) == ':') {
      int oh = digits(text, i + 1, 2);
      int om = digits(text, i + 4, 2);
      if (oh < 0 || oh > 23 || om < 0 || om > 59) {
        return null;
      }
      return (c == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    }
    return null;
  }

  private static int digits(String s, int from, int count) {
    int v = 0;
    for (int i = from; i < from + count; i++) {
      char c = s.charAt(i);
      if (!isDigit(c)) {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
