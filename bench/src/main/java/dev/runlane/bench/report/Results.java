package dev.runlane.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The figures of one run: printed as a table, written as JSON and Markdown. */
public final class Results {

  private final List<Row> rows = new ArrayList<>();
  private final Map<String, String> commands = new LinkedHashMap<>();
  private final Map<String, List<String>> notes = new LinkedHashMap<>();
  private final String mode;
  private final Instant started = Instant.now();

  public Results(String mode) {
    this.mode = mode;
  }

  public synchronized void add(Row row) {
    rows.add(row);
    System.out.printf(Locale.ROOT, "  >> %s%n", line(row));
  }

  public synchronized void command(String stage, String command) {
    commands.put(stage, command);
  }

  public synchronized void note(String stage, String note) {
    notes.computeIfAbsent(stage, s -> new ArrayList<>()).add(note);
    System.out.printf(Locale.ROOT, "  -- %s: %s%n", stage, note);
  }

  public synchronized List<Row> rows() {
    return List.copyOf(rows);
  }

  /** The table for stdout. */
  public synchronized String table() {
    StringBuilder b = new StringBuilder();
    String fmt = "%-13s %-46s %14s %-9s %14s %7s %-22s %s%n";
    b.append(
        String.format(
            Locale.ROOT,
            fmt,
            "stage",
            "figure",
            "value",
            "unit",
            "baseline",
            "ratio",
            "target",
            "met"));
    for (Row r : rows) {
      b.append(
          String.format(
              Locale.ROOT,
              fmt,
              r.stage(),
              r.figure(),
              num(r.value()),
              r.unit(),
              num(r.baselineValue()),
              ratio(r.ratio()),
              r.target(),
              met(r.met())));
    }
    for (var e : commands.entrySet()) {
      b.append(String.format(Locale.ROOT, "reproduce %-13s %s%n", e.getKey() + ":", e.getValue()));
    }
    return b.toString();
  }

  public synchronized String markdown() {
    StringBuilder b = new StringBuilder();
    b.append("# runlane benchmark results (")
        .append(mode)
        .append(", ")
        .append(started)
        .append(")\n\n");
    b.append("| stage | figure | value | unit | baseline (same run) | baseline value | ratio |")
        .append(" target | met |\n");
    b.append("|---|---|---:|---|---|---:|---:|---|---|\n");
    for (Row r : rows) {
      b.append("| ")
          .append(r.stage())
          .append(" | ")
          .append(r.figure())
          .append(" | ")
          .append(num(r.value()))
          .append(" | ")
          .append(r.unit())
          .append(" | ")
          .append(r.baseline())
          .append(" | ")
          .append(num(r.baselineValue()))
          .append(" | ")
          .append(ratio(r.ratio()))
          .append(" | ")
          .append(r.target())
          .append(" | ")
          .append(met(r.met()))
          .append(" |\n");
    }
    b.append("\n## Commands\n\n");
    for (var e : commands.entrySet()) {
      b.append("- ").append(e.getKey()).append(": `").append(e.getValue()).append("`\n");
    }
    if (!notes.isEmpty()) {
      b.append("\n## Notes\n\n");
      for (var e : notes.entrySet()) {
        for (String n : e.getValue()) {
          b.append("- ").append(e.getKey()).append(": ").append(n).append('\n');
        }
      }
    }
    return b.toString();
  }

  public synchronized String json() {
    StringBuilder b = new StringBuilder();
    b.append("{\n  \"mode\": ").append(str(mode));
    b.append(",\n  \"started\": ").append(str(started.toString()));
    b.append(",\n  \"machine\": {\"availableProcessors\": ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(", \"java\": ")
        .append(str(System.getProperty("java.vm.name") + " " + System.getProperty("java.version")))
        .append(", \"os\": ")
        .append(str(System.getProperty("os.name") + " " + System.getProperty("os.arch")))
        .append("}");
    b.append(",\n  \"rows\": [");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      b.append(i == 0 ? "\n" : ",\n")
          .append("    {\"stage\": ")
          .append(str(r.stage()))
          .append(", \"figure\": ")
          .append(str(r.figure()))
          .append(", \"value\": ")
          .append(jnum(r.value()))
          .append(", \"unit\": ")
          .append(str(r.unit()))
          .append(", \"baseline\": ")
          .append(str(r.baseline()))
          .append(", \"baselineValue\": ")
          .append(jnum(r.baselineValue()))
          .append(", \"ratio\": ")
          .append(jnum(r.ratio()))
          .append(", \"target\": ")
          .append(str(r.target()))
          .append(", \"met\": ")
          .append(r.met() == null ? "null" : r.met().toString())
          .append('}');
    }
    b.append("\n  ],\n  \"commands\": {");
    int i = 0;
    for (var e : commands.entrySet()) {
      b.append(i++ == 0 ? "\n" : ",\n")
          .append("    ")
          .append(str(e.getKey()))
          .append(": ")
          .append(str(e.getValue()));
    }
    b.append("\n  },\n  \"notes\": {");
    i = 0;
    for (var e : notes.entrySet()) {
      b.append(i++ == 0 ? "\n" : ",\n").append("    ").append(str(e.getKey())).append(": [");
      for (int j = 0; j < e.getValue().size(); j++) {
        b.append(j == 0 ? "" : ", ").append(str(e.getValue().get(j)));
      }
      b.append(']');
    }
    b.append("\n  }\n}\n");
    return b.toString();
  }

  public void write(Path dir) {
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("bench-results.json"), json(), StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("bench-results.md"), markdown(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write results to " + dir, e);
    }
  }

  private static String line(Row r) {
    StringBuilder b =
        new StringBuilder(
            String.format(
                Locale.ROOT, "%s / %s = %s %s", r.stage(), r.figure(), num(r.value()), r.unit()));
    if (!r.baseline().isEmpty()) {
      b.append(
          String.format(
              Locale.ROOT,
              " | %s = %s | ratio %s",
              r.baseline(),
              num(r.baselineValue()),
              ratio(r.ratio())));
    }
    if (r.met() != null) {
      b.append(" | target ").append(r.target()).append(": ").append(met(r.met()));
    }
    return b.toString();
  }

  public static String num(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    double a = Math.abs(v);
    if (a >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.3f", v);
  }

  private static String ratio(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2fx", v);
  }

  private static String met(Boolean met) {
    return met == null ? "" : met ? "MET" : "MISSED";
  }

  private static String jnum(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "null" : Double.toString(v);
  }

  public static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
