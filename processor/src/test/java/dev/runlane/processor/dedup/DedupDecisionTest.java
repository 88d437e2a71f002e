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
  })
  void followsTheDesignTable(Claim claim, Order order, Outcome expected) {
    assertThat(DedupDecision.decide(claim, order)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} read by {1} -> {2}")
  @CsvSource({
    "'done:0_1', 0_1, DONE_BY_THIS_TASK",
    "'done:0_1', 0_2, DONE_BY_OTHER",
    "'done:0_1:stale', 0_1, STALE_BY_THIS_TASK",
    "'done:0_1:stale', 0_2, DONE_BY_OTHER",
    "'done:g1/0_1:stale', g1/0_1, STALE_BY_THIS_TASK",
    "'done:0_10', 0_1, DONE_BY_OTHER",
    "'done:0_1', 0_10, DONE_BY_OTHER",
    "'processing:0_1', 0_1, PROCESSING_BY_THIS_TASK",
    "'processing:0_1', 0_2, PROCESSING_BY_OTHER",
    "'processing:0_1', 1_1, PROCESSING_BY_OTHER",
    "'garbage', 0_1, UNKNOWN_MARKER",
    "'done', 0_1, UNKNOWN_MARKER",
  })
  void readsWhatRedisHeld(String value, String owner, Claim expected) {
    assertThat(Claim.fromExisting(value, owner)).isEqualTo(expected);
  }

  @org.junit.jupiter.api.Test
  void aKeyThatExpiredBetweenSetAndGetIsNotOursSoTheEventWaits() {
    assertThat(Claim.fromExisting(null, "0_1")).isEqualTo(Claim.PROCESSING_BY_OTHER);
  }
}
