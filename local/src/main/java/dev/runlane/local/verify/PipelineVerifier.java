package dev.runlane.local.verify;

import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.local.simulator.Ledger;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Compares the simulator's {@link Ledger} with what the pipeline produced: {@code sume.events},
 * {@code sume.events.stale} and {@code sume.runs} read with {@code read_committed}, the query API
 * ({@code GET /runs/{id}}) and the processor's outcome metrics.
 *
 * <p>Checks: every generated event was acked; no acked event lost (each acked request id is in the
 * applied or the stale topic); no request id applied twice; nothing applied that was not sent; each
 * run's applied events move forward in (created_at, request_id); each run's final state (in {@code
 * sume.runs}) is its newest acked event (or a newer one that reached the ingress without an ack);
 * the query API agrees with {@code sume.runs}.
 *
 * <p>Call it after the simulator is idle. It first waits (up to the settle timeout) until every
 * acked event shows up downstream and the processor has no lag, then reads everything and checks.
 *
 * <p>This class only assembles the verification: {@code DownstreamReader} reads the topics, {@code
 * DownstreamChecks} checks what was read against the ledger, {@code QueryApiCheck} asks the query
 * API, {@code DatabaseCheck} the sink's database, and {@code ReportCounts} names the counts.
 */
public final class PipelineVerifier {

  /**
   * Where the pipeline is.
   *
   * @param bootstrapServers Kafka
   * @param topics the pipeline's topics
   * @param processorUri the processor's admin base, e.g. {@code http://127.0.0.1:9081}
   * @param applicationId the processor's application id (its consumer group)
   * @param sink the sink's database, or null when the pipeline has none
   * @param decisions the decision log's topic (D86)
   */
  public record Target(
      String bootstrapServers,
      TopicNames topics,
      URI processorUri,
      String applicationId,
      SinkTarget sink,
      String decisions) {

    /** A pipeline with the default decision log's topic. */
    public Target(
        String bootstrapServers,
        TopicNames topics,
        URI processorUri,
        String applicationId,
        SinkTarget sink) {
      this(
          bootstrapServers,
          topics,
          processorUri,
          applicationId,
          sink,
          DecisionLogSettings.DEFAULT_TOPIC);
    }

    /** A pipeline without a sink. */
    public Target(
        String bootstrapServers, TopicNames topics, URI processorUri, String applicationId) {
      this(bootstrapServers, topics, processorUri, applicationId, null);
    }
  }

  /**
   * Where the sink writes.
   *
   * @param jdbcUrl its database
   * @param user a user that may read it (no password: the local stack's database trusts loopback)
   * @param adminUri the sink's admin base (metrics)
   */
  public record SinkTarget(String jdbcUrl, String user, URI adminUri) {}

  private final Target target;

  public PipelineVerifier(Target target) {
    this.target = target;
  }

  /** Waits for the pipeline to settle (at most {@code settleTimeout}), then checks. */
  public Report verify(Ledger ledger, Duration settleTimeout) {
    return verify(ledger, settleTimeout, Duration.ZERO);
  }

  /**
   * As {@link #verify(Ledger, Duration)}, for a processor with a reorder window: also checks that
   * every event that reached the processor within the window of its run's newer events was applied
   * in order, so that only events later than the window are stale (D46).
   */
  public Report verify(Ledger ledger, Duration settleTimeout, Duration reorderWindow) {
    SentEvents sent = new SentEvents(ledger.snapshot());

    // The input itself only matters to the reorder window's check.
    Downstream down =
        new DownstreamReader(target).read(sent.acked(), settleTimeout, !reorderWindow.isZero());
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    ProcessorMetricsScrape metrics =
        ProcessorMetricsScrape.scrape(http, target.processorUri().resolve("/metrics"));

    DownstreamChecks.Result downstream =
        new DownstreamChecks(sent, down).check(reorderWindow, metrics.count("held"));
    List<Check> checks = new ArrayList<>(downstream.checks());
    checks.add(
        new QueryApiCheck(new QueryApiClient(http, target.processorUri()))
            .check(down.runs(), settleTimeout));

    DecisionLogCounts decisions =
        DecisionLogCounts.read(
            target.bootstrapServers(), target.decisions(), ledger.acks(), settleTimeout);
    checks.add(decisions.everyAckDecided(ledger.acks(), ledger.attempts(), target.decisions()));

    DatabaseCheck.Result database = null;
    if (target.sink() != null) {
      database =
          new DatabaseCheck(target.sink(), http)
              .check(down.applied().keySet(), down.runs(), settleTimeout);
      checks.addAll(database.checks());
    }
    return new Report(checks, ReportCounts.of(ledger, sent, down, decisions, database, downstream));
  }
}
