package dev.runlane.bench.probe;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The probes written for one investigation, which a run takes only when asked: {@code
 * BENCH_PROBES=tcp,broker-requests}. They add to the soak's lines, to no row, and each costs a
 * sample per window: the kernel's TCP counters ({@link TcpCounters}, D34) and the embedded broker's
 * request metrics ({@link BrokerRequests}).
 *
 * @param on the names asked for
 */
public record Probes(Set<String> on) {
  public static final String VARIABLE = "BENCH_PROBES";
  public static final String TCP = "tcp";
  public static final String BROKER_REQUESTS = "broker-requests";
  public static final List<String> KNOWN = List.of(TCP, BROKER_REQUESTS);

  /**
   * The probes a comma-separated list names (none for null or blank).
   *
   * @throws IllegalArgumentException naming the variable and the known probes, for any other name
   */
  public static Probes parse(String spec) {
    Set<String> on = new LinkedHashSet<>();
    if (spec != null) {
      for (String name : spec.split(",")) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        if (n.isEmpty()) {
          continue;
        }
        if (!KNOWN.contains(n)) {
          throw new IllegalArgumentException(
              VARIABLE + ": unknown probe '" + name.trim() + "'; probes: " + KNOWN);
        }
        on.add(n);
      }
    }
    return new Probes(Set.copyOf(on));
  }

  public boolean tcp() {
    return on.contains(TCP);
  }

  public boolean brokerRequests() {
    return on.contains(BROKER_REQUESTS);
  }
}
