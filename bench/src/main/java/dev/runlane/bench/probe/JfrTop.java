package dev.runlane.bench.probe;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where the time goes in a JFR recording: {@code java -cp runlane-bench.jar
 * dev.runlane.bench.probe.JfrTop FILE.jfr [N [FROM TO]]} (FROM, TO: ISO instants, as the bench
 * prints them at each stage's start and end) prints the top N frames (self time), the top N methods
 * anywhere on the stack (total time), and the busiest threads, from {@code jdk.ExecutionSample}.
 */
public final class JfrTop {
  private JfrTop() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 25;
    Map<String, Integer> self = new HashMap<>();
    Map<String, Integer> total = new HashMap<>();
    Map<String, Integer> threads = new HashMap<>();
    Map<String, Integer> packages = new HashMap<>();
    Instant from = args.length > 3 ? Instant.parse(args[2]) : Instant.MIN;
    Instant to = args.length > 3 ? Instant.parse(args[3]) : Instant.MAX;
    int samples = 0;
    try (RecordingFile file = new RecordingFile(Path.of(args[0]))) {
      while (file.hasMoreEvents()) {
        RecordedEvent e = file.readEvent();
        if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
          continue;
        }
        if (e.getStartTime().isBefore(from) || e.getStartTime().isAfter(to)) {
          continue;
        }
        RecordedStackTrace st = e.getStackTrace();
        if (st == null || st.getFrames().isEmpty()) {
          continue;
        }
        samples++;
        List<RecordedFrame> frames = st.getFrames();
        self.merge(name(frames.get(0)), 1, Integer::sum);
        packages.merge(pkg(frames.get(0)), 1, Integer::sum);
        frames.stream().map(JfrTop::name).distinct().forEach(f -> total.merge(f, 1, Integer::sum));
        String thread =
            e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
        threads.merge(thread == null ? "?" : thread.replaceAll("[0-9]+", "N"), 1, Integer::sum);
      }
    }
    System.out.printf("%d execution samples%n", samples);
    print("top frames (self)", self, samples, n);
    print("top packages (self)", packages, samples, n);
    print("top methods (on stack)", total, samples, n);
    print("threads (digits folded)", threads, samples, n);
  }

  private static void print(String title, Map<String, Integer> counts, int samples, int n) {
    System.out.printf("%n%s:%n", title);
    counts.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .limit(n)
        .forEach(
            e -> System.out.printf("  %5.1f%%  %s%n", 100.0 * e.getValue() / samples, e.getKey()));
  }

  private static String name(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }

  private static String pkg(RecordedFrame f) {
    String type = f.getMethod().getType().getName();
    int dot = type.lastIndexOf('.');
    String p = dot < 0 ? type : type.substring(0, dot);
    String[] parts = p.split("\\.");
    return String.join(".", Arrays.copyOf(parts, Math.min(parts.length, 4)));
  }
}
