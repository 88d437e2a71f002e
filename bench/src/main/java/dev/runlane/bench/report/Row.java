package dev.runlane.bench.report;

/**
 * One figure of a run, as the table, JSON and Markdown show it. Built by {@link #figure}, then
 * {@link #against} its same-run baseline and {@link #withTarget} the target where there are
 * any: the empty text and NaN a missing part is written as are spelled here once.
 *
 * @param stage the stage (ingress, verification, ...)
 * @param figure what was measured
 * @param value the value (NaN when not measured)
 * @param unit its unit
 * @param baseline what it is compared with (empty when nothing)
 * @param baselineValue the baseline's value, measured in the same run (NaN when none)
 * @param ratio value / baseline (or as defined by the stage; NaN when none)
 * @param target the target, in words (empty when none)
 * @param met whether the target is met (null when no target)
 */
public record Row(
    String stage,
    String figure,
    double value,
    String unit,
    String baseline,
    double baselineValue,
    double ratio,
    String target,
    Boolean met) {

  /** A figure with neither a baseline nor a target. */
  public static Row figure(String stage, String figure, double value, String unit) {
    return new Row(stage, figure, value, unit, "", Double.NaN, Double.NaN, "", null);
  }

  /**
   * This figure next to its baseline, measured in the same run. The ratio is the caller's: most are
   * value / baseline, some guard a zero baseline or compare with something else.
   */
  public Row against(String baseline, double baselineValue, double ratio) {
    return new Row(stage, figure, value, unit, baseline, baselineValue, ratio, target, met);
  }

  /** This figure held to the issue's {@code target} (in words), and whether it {@code met} it. */
  public Row withTarget(String target, boolean met) {
    return new Row(stage, figure, value, unit, baseline, baselineValue, ratio, target, met);
  }
}
