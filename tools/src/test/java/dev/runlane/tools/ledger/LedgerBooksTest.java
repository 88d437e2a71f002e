package dev.runlane.tools.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The ledger's books across audits (D89): what comes in one audit and what in the next must balance
 * the same as when read whole, and a record decided twice is named whenever its second decision
 * comes.
 */
class LedgerBooksTest {
  private static final String INPUT = "sume.webhooks";
  private static final TopicNames TOPICS =
      new TopicNames(INPUT, "sume.dlq", "sume.events", "sume.stale", "sume.runs");

  private final LedgerOutputs outputs = new LedgerOutputs(Map.of(), TOPICS, false);
  private final List<Ledger.Unaccounted> lost = new ArrayList<>();
  private final LedgerBooks books =
      new LedgerBooks(
          Generation.initial("runlane-processor", INPUT),
          new Ledger.Since(null, null),
          Map.of(0, 0L),
          outputs);

  @Test
  void aHeldEventReleasedAfterItsRecordWasAuditedTakesItsRecordInTheNextAudit() {
    books.decided(decision("r1", 0, Decision.Outcome.HELD, null));
    books.received(input("r1", 0), null);
    books.next.put(0, 1L);
    assertThat(books.counts.get(0).stillHeld).isOne();

    // The next audit: the release, and its record written with it, read in that audit.
    books.decided(decision("r1", 0, Decision.Outcome.RELEASED, "sume.events"));
    outputs.add("sume.events", "run-1", "r1", null, 0, 0);
    books.releasedLate(null);

    assertThat(books.counts.get(0).stillHeld).isZero();
    assertThat(books.unaccounted).isZero();
  }

  @Test
  void aReleaseWhoseRecordIsMissingIsNamed() {
    books.decided(decision("r1", 0, Decision.Outcome.HELD, null));
    books.received(input("r1", 0), null);
    books.next.put(0, 1L);
    books.decided(decision("r1", 0, Decision.Outcome.RELEASED, "sume.events"));
    books.releasedLate(null);

    assertThat(books.unaccounted).isOne();
    assertThat(books.named.get(0).why())
        .isEqualTo("released, and its record is not in sume.events");
  }

  @Test
  void aSecondDecisionAfterTheRecordWasAuditedIsNamed() {
    books.decided(decision("r1", 0, Decision.Outcome.APPLIED, "sume.events"));
    outputs.add("sume.events", "run-1", "r1", null, 0, 0);
    books.received(input("r1", 0), null);
    books.next.put(0, 1L);
    assertThat(books.unaccounted).isZero();

    books.decided(decision("r1", 0, Decision.Outcome.DUPLICATE, null));

    assertThat(books.unaccounted).isOne();
    assertThat(books.named.get(0).why()).isEqualTo("decided again after its record was audited");
  }

  @Test
  void aReplaysSilentHoldAndReleaseDecideTheRecordOnce() {
    books.decided(silent("r1", 0, "held"));
    books.decided(silent("r1", 0, "released"));
    books.received(input("r1", 0), null);
    books.next.put(0, 1L);
    // Or the release comes in the next audit.
    books.decided(silent("r2", 1, "held"));
    books.received(input("r2", 1), null);
    books.next.put(0, 2L);
    books.decided(silent("r2", 1, "released"));
    books.releasedLate(null);

    assertThat(books.unaccounted).isZero();
    assertThat(books.counts.get(0).decided).containsEntry(Decision.Outcome.RE_DERIVED, 2L);
  }

  @Test
  void aRecordWithNoDecisionIsNamed() {
    books.received(input("r1", 0), null);

    assertThat(books.unaccounted).isOne();
    assertThat(books.named.get(0).toString())
        .isEqualTo(
            INPUT + "/0/0 run_id=run-1 request_id=r1: received, and no decision is recorded");
  }

  private static Decision decision(
      String requestId, long offset, Decision.Outcome outcome, String output) {
    return new Decision(
        requestId, "run-1", INPUT, 0, offset, 0, null, outcome, "store", null, output, 1L, 2L);
  }

  private static Decision silent(String requestId, long offset, String reDerived) {
    return new Decision(
        requestId,
        "run-1",
        INPUT,
        0,
        offset,
        0,
        "rebuild-g0",
        Decision.Outcome.RE_DERIVED,
        "window",
        reDerived,
        null,
        1L,
        2L);
  }

  private static ConsumerRecord<byte[], byte[]> input(String requestId, long offset) {
    ConsumerRecord<byte[], byte[]> r =
        new ConsumerRecord<>(
            INPUT, 0, offset, "run-1".getBytes(StandardCharsets.UTF_8), new byte[] {'{', '}'});
    RecordHeaders.put(r.headers(), RecordHeaders.REQUEST_ID, requestId);
    return r;
  }
}
