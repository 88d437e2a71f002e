package dev.runlane.bench.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of another process on this machine (Linux {@code /proc/<pid>/stat}, utime + stime of all
 * its threads, ended ones included): the cost stage reads it for each service it runs in a process
 * of its own, before and after a window.
 */
public final class ProcessCpu {
  private ProcessCpu() {}

  /**
   * CPU milliseconds of process {@code pid} so far, to the kernel's clock tick (10 ms).
   *
   * @throws IllegalStateException when the process cannot be read (gone, or no {@code /proc}): a
   *     window must not count a component it could not see as costing nothing
   */
  public static long millis(long pid) {
    try {
      return ThreadCpu.cpuMillis(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot read the CPU time of process " + pid, e);
    }
  }

  /**
   * The machine's CPU time so far, busy and in all, in milliseconds over all cores ({@code
   * /proc/stat}'s first line): between two samples, busy over all says how saturated the machine
   * was, which tells a pipeline limited by CPU from one limited by waits.
   *
   * @return {busy, total}; {0, 0} without {@code /proc}
   */
  public static long[] machineMillis() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]); // idle + iowait
      return new long[] {(total - idle) * 10, total * 10};
    } catch (IOException | RuntimeException e) {
      return new long[] {0, 0};
    }
  }
}
