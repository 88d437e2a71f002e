package dev.runlane.common;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * Primitive generators shared by the property tests ({@link PropertyCheck}). A generator is a
 * function of the try's {@link Random}; ranges include both ends and favour them, where the edge
 * cases are.
 */
public final class Generators {

  private Generators() {}

  /** From {@code min} to {@code max}, both included; each end one time in 16. */
  public static long between(Random r, long min, long max) {
    int edge = r.nextInt(16);
    if (edge == 0) {
      return min;
    }
    if (edge == 1) {
      return max;
    }
    return max == Long.MAX_VALUE ? r.nextLong(min - 1, max) + 1 : r.nextLong(min, max + 1);
  }

  public static int between(Random r, int min, int max) {
    return (int) between(r, (long) min, (long) max);
  }

  @SafeVarargs
  public static <T> T oneOf(Random r, T... choices) {
    return choices[r.nextInt(choices.length)];
  }

  /** An index into {@code weights}, each drawn in proportion to its weight. */
  public static int weighted(Random r, int... weights) {
    int n = r.nextInt(Arrays.stream(weights).sum());
    int i = 0;
    while (n >= weights[i]) {
      n -= weights[i++];
    }
    return i;
  }

  /** {@code min} to {@code max} elements, each from {@code element} (which draws from r). */
  public static <T> List<T> listOf(Random r, int min, int max, Supplier<T> element) {
    int size = between(r, min, max);
    List<T> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(element.get());
    }
    return out;
  }

  public static byte[] bytes(Random r, int min, int max) {
    byte[] out = new byte[between(r, min, max)];
    r.nextBytes(out);
    return out;
  }

  /** A string of {@code min} to {@code max} characters of {@code alphabet}. */
  public static String chars(Random r, String alphabet, int min, int max) {
    int length = between(r, min, max);
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return sb.toString();
  }

  /** A code point from U+0080 to U+FFFF, not a surrogate. */
  public static int bmpOutsideAscii(Random r) {
    int c;
    do {
      c = between(r, 0x80, 0xffff);
    } while (Character.isSurrogate((char) c));
    return c;
  }
}
