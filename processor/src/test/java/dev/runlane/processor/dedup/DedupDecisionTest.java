package dev.runlane.processor.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DedupDecisionTest {

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
    assertThat(DedupDecision.decide(claim, order)).isEqualTo(expected);
  }
}
