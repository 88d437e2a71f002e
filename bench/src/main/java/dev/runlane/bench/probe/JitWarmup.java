package dev.runlane.bench.probe;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A warm-up that lasts until the JIT has settled. Everything (broker, services, load generator)
 * shares one JVM on a small machine, and C2 keeps compiling hot code for a minute or more after a
 * short warm-up, taking most of a core: a figure measured then measures the JIT. The ingress stage
 * saw its compiler threads at 0.6-0.85 of a core for 40 s after its old fixed 12 s warm-up, all
 * through its 1k/s and 5k/s windows.
 */
public final class JitWarmup {
  /** Compile time per 5 s window of load below which the JIT counts as settled (10% of a core). */
  public static final long SETTLED_MS_PER_WINDOW = 500;

  /** One round of discarded load. */
  public interface Round {
    void run() throws Exception;
  }

  private JitWarmup() {}

  /**
   * Runs {@code round} (whose load lasts {@code windowsPerRound} windows of 5 s) at least once and
   * until the JIT compiled less than {@link #SETTLED_MS_PER_WINDOW} per window in one, or for at
   * most {@code cap}. The compiler threads' CPU decides where {@code /proc} gives it (the figure
   * the soak prints per window), elsewhere the JIT's compilation time. The cap is checked between
   * rounds, so the warm-up can run over it by one round.
   *
   * @param what the load of one round, for the note (e.g. "5 s windows at 1,000/s")
   * @return what happened, for the caller to note
   */
  public static String untilSettled(Duration cap, int windowsPerRound, String what, Round round)
      throws Exception {
    var jit = ManagementFactory.getCompilationMXBean();
    boolean byThreads = !ThreadCpu.sample().isEmpty();
    LongSupplier compiledSoFar =
        byThreads ? JitWarmup::compilerMillis : jit::getTotalCompilationTime;
    long limit = SETTLED_MS_PER_WINDOW * windowsPerRound;
    long start = System.nanoTime();
    long compiled;
    do {
      long before = compiledSoFar.getAsLong();
      round.run();
      compiled = compiledSoFar.getAsLong() - before;
    } while (System.nanoTime() - start < cap.toNanos() && compiled >= limit);
    return String.format(
        "warm-up: %d s of %s, discarded, until the JIT compiled < %d ms in a 5 s window (%s;"
            + " last round: %d ms per window%s)",
        (System.nanoTime() - start) / 1_000_000_000L,
        what,
        SETTLED_MS_PER_WINDOW,
        byThreads ? "compiler threads' CPU" : "the JIT's compilation time",
        compiled / windowsPerRound,
        compiled >= limit ? ", cap reached" : "");
  }

  /**
   * CPU milliseconds of the live JIT compiler threads so far. With more cores HotSpot adds and
   * retires compiler threads on demand, and a retired one's CPU drops out of the sum; on this box's
   * 2 cores there is one C1 and one C2 thread for the whole run.
   */
  private static long compilerMillis() {
    return ThreadCpu.sample().entrySet().stream()
        .filter(e -> e.getKey().contains("CompilerThre"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}
