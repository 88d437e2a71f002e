package dev.runlane.bench.probe;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time of this JVM's threads (Linux {@code /proc/self/task}), grouped by thread name with
 * digits folded, so that one sample minus another says which threads took the machine in between:
 * the broker's log cleaner, a compiler thread, the stream thread. Native threads (RocksDB's) count
 * too, which JFR's execution samples miss. Empty where {@code /proc} is absent.
 */
public final class ThreadCpu {
  /** Linux reports utime and stime in clock ticks of 1/100 s on every common configuration. */
  private static final long MILLIS_PER_TICK = 10;

  private static final Path TASKS = Path.of("/proc/self/task");
  private static final Path PROCESS = Path.of("/proc/self/stat");

  private ThreadCpu() {}

  /** CPU milliseconds so far, by thread name (digits folded to '#'; Linux keeps 15 characters). */
  public static Map<String, Long> sample() {
    Map<String, Long> out = new HashMap<>();
    if (!Files.isDirectory(TASKS)) {
      return out;
    }
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          String name = Files.readString(task.resolve("comm")).trim().replaceAll("[0-9]+", "#");
          out.merge(name, cpuMillis(Files.readString(task.resolve("stat"))), Long::sum);
        } catch (IOException | RuntimeException e) {
          // the thread ended between the listing and the read
        }
      }
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /**
   * CPU milliseconds of the whole process so far, threads that have ended included: the part of a
   * window's total that no listed thread explains ran on short-lived threads. 0 without {@code
   * /proc}.
   */
  public static long processMillis() {
    try {
      return cpuMillis(Files.readString(PROCESS));
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** utime + stime of one {@code /proc/<pid>/task/<tid>/stat} line, in milliseconds. */
  public static long cpuMillis(String stat) {
    // The name, in parentheses, may hold spaces: count fields after the last ')'.
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * MILLIS_PER_TICK;
  }

  /**
   * The {@code n} thread groups that used the most CPU between two samples, busiest first. A group
   * whose threads ended in between can come out negative.
   */
  public static String top(Map<String, Long> before, Map<String, Long> after, int n) {
    List<Map.Entry<String, Long>> used = new ArrayList<>();
    after.forEach((k, v) -> used.add(Map.entry(k, v - before.getOrDefault(k, 0L))));
    used.sort(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()));
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < Math.min(n, used.size()); i++) {
      out.append(String.format(" %s=%d", used.get(i).getKey(), used.get(i).getValue()));
    }
    return out.toString().trim();
  }
}
