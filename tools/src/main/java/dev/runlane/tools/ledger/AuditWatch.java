package dev.runlane.tools.ledger;

import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.generation.Pipeline;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ledger checked continuously (D89): {@code runlane audit --watch} audits every interval and
 * exports the balance, so that a silent loss anywhere in the pipeline pages someone. {@code
 * runlane_audit_unaccounted_records} is the last audit's count of unaccounted input records (0 when
 * balanced); {@code runlane_audit_runs_total{result}} counts audits by result (balanced,
 * unaccounted, failed), and a failed audit leaves the gauge as it was.
 *
 * <p>Each audit reads on from where the last one stopped; every {@code fullEvery}th reads the
 * topics whole again, opening new books: a record deleted from an output after it was audited is
 * found there, and the counts are those since that audit.
 */
public final class AuditWatch {
  /** The unaccounted records of the last audit that ran to its end. */
  public static final String UNACCOUNTED = "runlane.audit.unaccounted.records";

  /** The input records the last audit checked. */
  public static final String CHECKED = "runlane.audit.checked.records";

  /** Audits by {@code result}. */
  public static final String RUNS = "runlane.audit.runs";

  private final Ledger ledger;
  private final DecisionLogSettings log;
  private final int fullEvery;
  private long audits;
  private final PrintStream out;
  private final AtomicLong unaccounted = new AtomicLong();
  private final AtomicLong checked = new AtomicLong();
  private final Counter balanced;
  private final Counter imbalanced;
  private final Counter failed;
  private volatile boolean ranOnce;

  /**
   * @param sink the sink's settings, whose rows the audit checks too (D94), or null
   * @param fullEvery every how many audits one reads the topics whole (1: each)
   */
  public AuditWatch(
      Pipeline pipeline,
      DecisionLogSettings log,
      SinkConfig sink,
      int fullEvery,
      MeterRegistry registry,
      PrintStream out) {
    this.ledger = new Ledger(pipeline, log, sink);
    this.log = log;
    this.fullEvery = fullEvery;
    this.out = out;
    Gauge.builder(UNACCOUNTED, unaccounted, AtomicLong::get)
        .description("Input records the last audit could not account for (0: balanced)")
        .register(registry);
    Gauge.builder(CHECKED, checked, AtomicLong::get)
        .description("Input records the last audit checked")
        .register(registry);
    this.balanced = runs(registry, "balanced");
    this.imbalanced = runs(registry, "unaccounted");
    this.failed = runs(registry, "failed");
  }

  private static Counter runs(MeterRegistry registry, String result) {
    return Counter.builder(RUNS)
        .tag("result", result)
        .description("Audits of the ledger, by result")
        .register(registry);
  }

  /** Whether an audit has run to its end: readiness. */
  public boolean ranOnce() {
    return ranOnce;
  }

  /** Audits once and exports the result; a failure is printed and counted, never thrown. */
  public Ledger.Result auditOnce() {
    try {
      boolean whole = audits++ % fullEvery == 0;
      Ledger.Result r = whole ? ledger.auditWhole(null) : ledger.audit(null);
      long received = r.partitions().stream().mapToLong(Ledger.Balance::received).sum();
      unaccounted.set(r.unaccountedCount());
      checked.set(received);
      (r.balanced() ? balanced : imbalanced).increment();
      ranOnce = true;
      if (r.balanced()) {
        out.printf(
            "%s balanced: %d input records since the last whole audit%s%n",
            Instant.now(), received, whole ? " (this one)" : "");
      } else {
        AuditOutput.text(r, log.topic(), out);
      }
      return r;
    } catch (RuntimeException e) {
      failed.increment();
      out.printf("%s audit failed: %s%n", Instant.now(), e);
      return null;
    }
  }

  /** Audits every {@code interval} until {@code stop} counts down. */
  public void watch(Duration interval, CountDownLatch stop) throws InterruptedException {
    do {
      auditOnce();
    } while (!stop.await(interval.toMillis(), TimeUnit.MILLISECONDS));
  }
}
