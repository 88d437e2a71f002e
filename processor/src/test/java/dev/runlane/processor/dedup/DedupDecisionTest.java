package dev.runlane.processor.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DedupDecisionTest {

  /** Decisions that do not read the record of decided ids, or where it has nothing to say. */
  @ParameterizedTest(name = "{0} x {1} -> {2}")
  @CsvSource({
    "NEW, NEWER, APPLY",
    "NEW, SAME, DUPLICATE_STORE",
    "NEW, OLDER, STALE",
    "DONE_BY_OTHER, NEWER, DUPLICATE_REDIS",
    "DONE_BY_OTHER, SAME, DUPLICATE_REDIS",
    "DONE_BY_OTHER, OLDER, DUPLICATE_REDIS",
    "DONE_BY_THIS_TASK, NEWER, APPLY",
    "DONE_BY_THIS_TASK, SAME, DUPLICATE_REDIS",
    "DONE_BY_THIS_TASK, OLDER, DUPLICATE_REDIS",
    "STALE_BY_THIS_TASK, NEWER, APPLY",
    "STALE_BY_THIS_TASK, SAME, DUPLICATE_STORE",
    "STALE_BY_THIS_TASK, OLDER, STALE",
    "PROCESSING_BY_THIS_TASK, NEWER, APPLY",
    "PROCESSING_BY_THIS_TASK, SAME, DUPLICATE_STORE",
    "PROCESSING_BY_THIS_TASK, OLDER, STALE",
    "PROCESSING_BY_OTHER, NEWER, WAIT",
    "PROCESSING_BY_OTHER, SAME, WAIT",
    "PROCESSING_BY_OTHER, OLDER, WAIT",
    "UNAVAILABLE, NEWER, APPLY",
    "UNAVAILABLE, SAME, DUPLICATE_STORE",
    "UNAVAILABLE, OLDER, STALE",
    "EARLIER_IN_BATCH, NEWER, DUPLICATE_REDIS",
    "EARLIER_IN_BATCH, SAME, DUPLICATE_REDIS",
    "EARLIER_IN_BATCH, OLDER, DUPLICATE_REDIS",
    "UNKNOWN_MARKER, NEWER, APPLY",
    "UNKNOWN_MARKER, SAME, DUPLICATE_STORE",
    "UNKNOWN_MARKER, OLDER, STALE",
    "OTHER_RUN, NEWER, REUSED",
    "OTHER_RUN, SAME, REUSED",
    "OTHER_RUN, OLDER, REUSED",
    "REPLAY, NEWER, APPLY",
    "REPLAY, SAME, DUPLICATE_STORE",
    "REPLAY, OLDER, STALE",
  })
  void followsTheDesignTable(Claim claim, Order order, Outcome expected) {
    assertThat(DedupDecision.decide(claim, order, Recorded.UNKNOWN)).isEqualTo(expected);
  }

  /**
   * Where Redis cannot tell or its marker may be of an aborted attempt, the record of decided ids
   * tells a copy of a decided event from one never decided, and sees a reused id (D68).
   */
  @ParameterizedTest(name = "{0} x {1} x {2} -> {3}")
  @CsvSource({
    "UNAVAILABLE, OLDER, APPLIED, DUPLICATE_STORE",
    "UNAVAILABLE, OLDER, NONE, STALE",
    "UNAVAILABLE, OLDER, STALE, STALE",
    "UNAVAILABLE, NEWER, OTHER_RUN, REUSED_STORE",
    "UNAVAILABLE, NEWER, NONE, APPLY",
    "REPLAY, OLDER, APPLIED, DUPLICATE_STORE",
    "REPLAY, OLDER, NONE, STALE",
    "REPLAY, NEWER, OTHER_RUN, REUSED_STORE",
    "REPLAY, SAME, APPLIED, DUPLICATE_STORE",
    "UNKNOWN_MARKER, OLDER, APPLIED, DUPLICATE_STORE",
    "UNKNOWN_MARKER, OLDER, NONE, STALE",
    "UNKNOWN_MARKER, NEWER, OTHER_RUN, REUSED_STORE",
    "NEW, OLDER, APPLIED, DUPLICATE_STORE",
    "STALE_BY_THIS_TASK, OLDER, STALE, STALE",
    "DONE_BY_THIS_TASK, OLDER, APPLIED, DUPLICATE_REDIS",
    "DONE_BY_THIS_TASK, OLDER, NONE, STALE",
    "DONE_BY_THIS_TASK, OLDER, UNKNOWN, DUPLICATE_REDIS",
    "DONE_BY_THIS_TASK, NEWER, NONE, APPLY",
    "DONE_BY_THIS_TASK, SAME, NONE, DUPLICATE_REDIS",
    "NEW, NEWER, OTHER_RUN, REUSED_STORE",
    "DONE_BY_OTHER, OLDER, NONE, DUPLICATE_REDIS",
    "OTHER_RUN, NEWER, NONE, REUSED",
  })
  void readsTheRecordOfDecidedIds(Claim claim, Order order, Recorded recorded, Outcome expected) {
    assertThat(DedupDecision.decide(claim, order, recorded)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} x {1} reads the record: {2}")
  @CsvSource({
    "UNAVAILABLE, NEWER, true",
    "REPLAY, NEWER, true",
    "UNKNOWN_MARKER, NEWER, true",
    "NEW, NEWER, false",
    "NEW, OLDER, true",
    "DONE_BY_THIS_TASK, NEWER, false",
    "DONE_BY_THIS_TASK, SAME, true",
    "DONE_BY_OTHER, OLDER, false",
    "OTHER_RUN, OLDER, false",
    "EARLIER_IN_BATCH, OLDER, false",
    "PROCESSING_BY_OTHER, OLDER, false",
  })
  void readsTheRecordOnlyWhereItCanChangeTheDecision(Claim claim, Order order, boolean reads) {
    assertThat(DedupDecision.readsRecord(claim, order)).isEqualTo(reads);
  }
}
