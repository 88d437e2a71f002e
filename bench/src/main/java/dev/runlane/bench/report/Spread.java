package dev.runlane.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The middle and the range of a few repetitions of one figure: a same-run figure on this shared
 * machine is reported with how far its repetitions lay apart, not as one draw (issue 40, D92).
 *
 * @param median the middle value (the mean of the two middle ones for an even count); NaN if none
 * @param min the lowest
 * @param max the highest
 * @param count how many values
 */
public record Spread(double median, double min, double max, int count) {

  /** The spread of {@code values}; NaN values are left out, and none gives NaN throughout. */
  public static Spread of(List<Double> values) {
    List<Double> sorted = new ArrayList<>();
    for (Double v : values) {
      if (v != null && !v.isNaN()) {
        sorted.add(v);
      }
    }
    sorted.sort(Double::compare);
    int n = sorted.size();
    if (n == 0) {
      return new Spread(Double.NaN, Double.NaN, Double.NaN, 0);
    }
    double median =
        n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    return new Spread(median, sorted.get(0), sorted.get(n - 1), n);
  }

  /**
   * The spread of the ratios {@code a[i] / b[i]}, repetition by repetition: each ratio is of two
   * figures measured minutes apart in the same repetition, so the machine's drift over a run moves
   * both. A repetition with a zero or missing {@code b} gives no ratio.
   *
   * @throws IllegalArgumentException when the lists differ in length
   */
  public static Spread ofRatios(List<Double> a, List<Double> b) {
    if (a.size() != b.size()) {
      throw new IllegalArgumentException(
          "ratios of " + a.size() + " values to " + b.size() + " values");
    }
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < a.size(); i++) {
      double den = b.get(i);
      ratios.add(den == 0 || Double.isNaN(den) ? Double.NaN : a.get(i) / den);
    }
    return of(ratios);
  }

  /** E.g. {@code 1.31x (1.25-1.41x over 3)}, or {@code n/a} when there was no value. */
  public String ratio() {
    if (count == 0) {
      return "n/a";
    }
    return String.format(Locale.ROOT, "%.2fx (%.2f-%.2fx over %d)", median, min, max, count);
  }

  /** E.g. {@code 412 (398-430 over 3)}, or {@code n/a} when there was no value. */
  public String value() {
    if (count == 0) {
      return "n/a";
    }
    return String.format(Locale.ROOT, "%,.0f (%,.0f-%,.0f over %d)", median, min, max, count);
  }
}
