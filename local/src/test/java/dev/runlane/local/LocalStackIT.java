package dev.runlane.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.local.simulator.Ledger;
import dev.runlane.local.simulator.Ledger.Failure;
import dev.runlane.local.simulator.SumeSimulator;
import dev.runlane.local.verify.PipelineVerifier;
import dev.runlane.local.verify.Report;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The Sume simulator against the whole one-JVM stack (real KRaft broker, real Redis, ingress,
 * processor), with Sume's retry schedule compressed 1000 times, and the ingress stopped for a while
 * in the middle: Sume's retries must carry the events across the outage, and the report must be
 * clean.
 */
class LocalStackIT {

  private static final long EVENTS = 1_500;
  private static final double RATE = 100;

  @Test
  void retriesCarryEventsAcrossAnIngressOutageAndTheReportIsClean() throws Exception {
    try (Stack stack = Stack.start(Stack.Settings.freePorts(Stack.newSecret()));
        SumeSimulator simulator =
            new SumeSimulator(
                SumeSimulator.Settings.of(stack.webhookUri(), stack.secret(), 1000, 20261129L))) {
      Ledger ledger = simulator.ledger();
      simulator.start(RATE, EVENTS, Duration.ofMinutes(1));

      await().atMost(Duration.ofSeconds(30)).until(() -> ledger.ackedEvents() >= 300);
      stack.stopIngress();
      long refusedBefore = ledger.failures(Failure.CONNECTION);
      // The ingress stays away until Sume has seen a good number of refused attempts.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> ledger.failures(Failure.CONNECTION) >= refusedBefore + 150);
      long ackedDuringOutage = ledger.ackedEvents();
      stack.startIngress();

      assertThat(simulator.awaitIdle(Duration.ofSeconds(60))).as("simulator idle").isTrue();
      Report report =
          new PipelineVerifier(stack.verifierTarget()).verify(ledger, Duration.ofSeconds(60));

      assertThat(report.passed()).as(report.summary()).isTrue();
      assertThat(report.count("events generated")).isEqualTo(EVENTS);
      assertThat(report.count("events acked")).isEqualTo(EVENTS);
      assertThat(ledger.ackedEvents()).isGreaterThan(ackedDuringOutage);
      assertThat(report.count("failed attempts: connection")).isGreaterThanOrEqualTo(150);
      assertThat(report.count("retries")).isGreaterThanOrEqualTo(150);
      assertThat(report.count("injected: redeliveries after ack")).isPositive();
      assertThat(report.count("injected: concurrent copies")).isPositive();
      assertThat(report.count("stale (sume.events.stale)")).isPositive();
      assertThat(report.count("duplicates caught by redis")).isPositive();
      System.out.println(report.summary());
    }
  }
}
