package dev.runlane.bench.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The kernel's counters of lost TCP segments, from Linux's {@code /proc/net/netstat} and {@code
 * /proc/net/snmp}: segments a full receive queue dropped, and retransmissions. A soak window whose
 * e2e p99 sits about 200 ms above its neighbours' is TCP's minimum retransmission timeout at work,
 * and these say so at once, where latency figures alone point at a slow stage (D34). Empty where
 * the files do not exist.
 */
public final class TcpCounters {
  public static final String RECEIVE_QUEUE_DROPS = "TcpExt.TCPRcvQDrop";
  public static final String RETRANSMITS = "Tcp.RetransSegs";

  private TcpCounters() {}

  /** Every counter of both files, named {@code Prefix.Name}; empty if they cannot be read. */
  public static Map<String, Long> sample() {
    Map<String, Long> out = new HashMap<>();
    for (String file : new String[] {"/proc/net/netstat", "/proc/net/snmp"}) {
      try {
        out.putAll(parse(Files.readString(Path.of(file))));
      } catch (IOException | RuntimeException e) {
        return Map.of(); // not Linux, or not allowed: the soak prints without them
      }
    }
    return out;
  }

  /**
   * Parses the {@code /proc} format: for each prefix, a line of names and then a line of values,
   * {@code "TcpExt: A B"} over {@code "TcpExt: 1 2"}.
   */
  public static Map<String, Long> parse(String text) {
    Map<String, Long> out = new HashMap<>();
    String[] lines = text.split("\n");
    for (int i = 0; i + 1 < lines.length; i += 2) {
      String[] names = lines[i].trim().split("\\s+");
      String[] values = lines[i + 1].trim().split("\\s+");
      if (names.length != values.length || !names[0].equals(values[0])) {
        throw new IllegalArgumentException("not a name line over a value line: " + lines[i]);
      }
      String prefix = names[0].substring(0, names[0].length() - 1); // "TcpExt:" -> "TcpExt"
      for (int k = 1; k < names.length; k++) {
        out.put(prefix + "." + names[k], Long.parseLong(values[k]));
      }
    }
    return out;
  }

  /** What the soak prints for a window: drops and retransmits between two samples. */
  public static String between(Map<String, Long> before, Map<String, Long> after) {
    if (before.isEmpty() || after.isEmpty()) {
      return "n/a";
    }
    return String.format(
        "receive-queue drops %d, retransmits %d",
        delta(before, after, RECEIVE_QUEUE_DROPS), delta(before, after, RETRANSMITS));
  }

  private static long delta(Map<String, Long> before, Map<String, Long> after, String name) {
    return after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
  }
}
