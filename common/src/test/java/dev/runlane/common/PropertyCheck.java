package dev.runlane.common;

import java.lang.reflect.RecordComponent;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs a property (a check that must hold for every generated input) a number of times, with plain
 * JUnit: no engine, no shrinking. Try {@code t} draws its input from a {@link Random} seeded with
 * the {@code t}-th long of a {@link SplittableRandom} on the run's seed, so the seed and the try's
 * number replay a failure.
 *
 * <p>The run's seed is {@value #DEFAULT_SEED}, so CI runs the same inputs every time. {@code
 * -Drunlane.seed=<long>} sets another; {@code -Drunlane.seed=random} draws one (printed once).
 * {@code -Drunlane.try=<n>} runs only try {@code n} (and checks no coverage). A failure's message
 * gives the seed, the try, the flags that replay it and the input, shortened.
 */
public final class PropertyCheck {

  public static final long DEFAULT_SEED = 20261202L;

  /** The longest input description a failure carries, and the longest string or byte run in it. */
  private static final int MAX_INPUT = 2000;

  private static final int MAX_LEAF = 120;

  private static final long SEED = seed(System.getProperty("runlane.seed"));

  private static final int ONLY_TRY = Integer.getInteger("runlane.try", 0);

  private PropertyCheck() {}

  /** Runs {@code property} on {@code tries} inputs from {@code generator}. */
  public static <T> void forAll(
      int tries, Function<Random, T> generator, Consumer<? super T> property) {
    forAll(
        tries,
        generator,
        input -> {
          property.accept(input);
          return null;
        },
        List.of());
  }

  /**
   * Runs {@code property} on {@code tries} inputs from {@code generator}; it returns a label for
   * what happened (an outcome, a reason). Then every label in {@code mustReach} must have been
   * returned at least once, so that the property cannot pass because the generators never reach a
   * case.
   */
  public static <T> void forAll(
      int tries,
      Function<Random, T> generator,
      Function<? super T, ?> property,
      Collection<?> mustReach) {
    SplittableRandom seeds = new SplittableRandom(SEED);
    Map<Object, Integer> reached = new LinkedHashMap<>();
    for (int t = 1; t <= tries; t++) {
      long trySeed = seeds.nextLong();
      if (ONLY_TRY != 0 && t != ONLY_TRY) {
        continue;
      }
      T input;
      try {
        input = generator.apply(new Random(trySeed));
      } catch (Throwable e) {
        throw new AssertionError(where(t, tries) + "\n  generating the input failed: " + e, e);
      }
      try {
        reached.merge(property.apply(input), 1, Integer::sum);
      } catch (Throwable e) {
        throw new AssertionError(
            where(t, tries) + "\n  input: " + describe(input) + "\n  failure: " + e, e);
      }
    }
    if (ONLY_TRY == 0) {
      List<?> missed = mustReach.stream().filter(label -> !reached.containsKey(label)).toList();
      if (!missed.isEmpty()) {
        throw new AssertionError(
            "the generators never reached "
                + missed
                + " in "
                + tries
                + " tries (seed "
                + SEED
                + "); reached "
                + reached);
      }
    }
  }

  private static String where(int t, int tries) {
    return "property failed on try "
        + t
        + " of "
        + tries
        + " (seed "
        + SEED
        + "; replay this try with -Drunlane.seed="
        + SEED
        + " -Drunlane.try="
        + t
        + ")";
  }

  private static long seed(String property) {
    if (property == null || property.isBlank()) {
      return DEFAULT_SEED;
    }
    if (property.trim().equals("random")) {
      long seed = ThreadLocalRandom.current().nextLong();
      System.out.println("PropertyCheck: -Drunlane.seed=random drew seed " + seed);
      return seed;
    }
    try {
      return Long.parseLong(property.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "-Drunlane.seed must be a long or \"random\", got \"" + property + "\"", e);
    }
  }

  /**
   * An input for a failure message: records by component, strings quoted with everything outside
   * printable ASCII escaped, byte arrays as their length and bytes; long parts cut.
   */
  static String describe(Object input) {
    StringBuilder sb = new StringBuilder();
    describe(input, sb);
    return sb.length() <= MAX_INPUT ? sb.toString() : sb.substring(0, MAX_INPUT) + "...";
  }

  private static void describe(Object value, StringBuilder sb) {
    if (sb.length() > MAX_INPUT) {
      return;
    }
    if (value instanceof String s) {
      sb.append('"');
      for (int i = 0; i < Math.min(s.length(), MAX_LEAF); i++) {
        char c = s.charAt(i);
        if (c == '"' || c == '\\') {
          sb.append('\\').append(c);
        } else if (c >= 0x20 && c <= 0x7e) {
          sb.append(c);
        } else {
          sb.append(String.format("\\u%04x", (int) c));
        }
      }
      sb.append(s.length() > MAX_LEAF ? "\"...(" + s.length() + " chars)" : "\"");
    } else if (value instanceof byte[] b) {
      sb.append("bytes[").append(b.length).append("]\"");
      for (int i = 0; i < Math.min(b.length, MAX_LEAF); i++) {
        int c = b[i] & 0xff;
        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
          sb.append((char) c);
        } else {
          sb.append(String.format("\\x%02x", c));
        }
      }
      sb.append(b.length > MAX_LEAF ? "\"..." : "\"");
    } else if (value instanceof Record r) {
      sb.append(r.getClass().getSimpleName()).append('[');
      RecordComponent[] components = r.getClass().getRecordComponents();
      for (int i = 0; i < components.length; i++) {
        sb.append(i == 0 ? "" : ", ").append(components[i].getName()).append('=');
        try {
          components[i].getAccessor().setAccessible(true);
          describe(components[i].getAccessor().invoke(r), sb);
        } catch (ReflectiveOperationException | RuntimeException e) {
          sb.append('?');
        }
      }
      sb.append(']');
    } else if (value instanceof Collection<?> c) {
      sb.append('[');
      int i = 0;
      for (Object item : c) {
        if (sb.length() > MAX_INPUT) {
          break;
        }
        sb.append(i++ == 0 ? "" : ", ");
        describe(item, sb);
      }
      sb.append(']');
    } else if (value instanceof Map.Entry<?, ?> e) {
      describe(e.getKey(), sb);
      sb.append('=');
      describe(e.getValue(), sb);
    } else {
      sb.append(value);
    }
  }
}
