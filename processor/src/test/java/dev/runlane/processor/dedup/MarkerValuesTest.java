package dev.runlane.processor.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MarkerValuesTest {
  private static final String RUN = "run-1";
  private static final String TAG = MarkerValues.runTag(RUN);
  private static final String OTHER_TAG = MarkerValues.runTag("run-2");

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
  void readsValuesWrittenBeforeRunTagsAsNamingTheEventsOwnRun(
      String value, String owner, Claim expected) {
    assertThat(MarkerValues.read(value, owner, RUN)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} read by {1} -> {2}")
  @CsvSource({
    "'done:0_1@TAG', 0_1, DONE_BY_THIS_TASK",
    "'done:0_1@TAG', 0_2, DONE_BY_OTHER",
    "'done:0_1@TAG:stale', 0_1, STALE_BY_THIS_TASK",
    "'done:g2/0_1@TAG:stale', g2/0_1, STALE_BY_THIS_TASK",
    "'processing:0_1@TAG', 0_1, PROCESSING_BY_THIS_TASK",
    "'processing:0_1@TAG', 0_2, PROCESSING_BY_OTHER",
    "'done:0_1@OTHER', 0_1, OTHER_RUN",
    "'done:0_1@OTHER', 0_2, OTHER_RUN",
    "'done:0_1@OTHER:stale', 0_1, OTHER_RUN",
    "'processing:0_1@OTHER', 0_1, OTHER_RUN",
    "'processing:0_1@OTHER', 0_2, OTHER_RUN",
  })
  void aValueNamingAnotherRunIsThatRunsWhoeverWroteIt(String value, String owner, Claim expected) {
    String written = value.replace("@TAG", "@" + TAG).replace("@OTHER", "@" + OTHER_TAG);
    assertThat(MarkerValues.read(written, owner, RUN)).isEqualTo(expected);
  }

  /** A replay's lookup: only a runlane value with another run's tag names another run (D70). */
  @ParameterizedTest(name = "{0} names another run: {1}")
  @CsvSource({
    "'done:0_1@OTHER', true",
    "'done:g1/0_1@OTHER:stale', true",
    "'processing:0_1@OTHER', true",
    "'done:0_1@TAG', false",
    "'done:0_1@TAG:stale', false",
    "'done:0_1', false",
    "'v0|r1|applied', false",
  })
  void namesAnotherRunOnlyByItsTag(String value, boolean expected) {
    String written = value.replace("@TAG", "@" + TAG).replace("@OTHER", "@" + OTHER_TAG);
    assertThat(MarkerValues.namesOtherRun(written, RUN)).isEqualTo(expected);
    assertThat(MarkerValues.namesOtherRun(null, RUN)).isFalse();
  }

  @Test
  void whatItWritesItReadsBack() {
    assertThat(MarkerValues.read(MarkerValues.processing("g1/0_3", RUN), "g1/0_3", RUN))
        .isEqualTo(Claim.PROCESSING_BY_THIS_TASK);
    assertThat(MarkerValues.read(MarkerValues.done("0_3", RUN, false), "0_3", RUN))
        .isEqualTo(Claim.DONE_BY_THIS_TASK);
    assertThat(MarkerValues.read(MarkerValues.done("0_3", RUN, true), "0_3", RUN))
        .isEqualTo(Claim.STALE_BY_THIS_TASK);
    assertThat(MarkerValues.read(MarkerValues.done("0_3", RUN, false), "0_3", "run-2"))
        .isEqualTo(Claim.OTHER_RUN);
  }

  @Test
  void aRunTagIsEightCharactersThatTellRunsApart() {
    assertThat(TAG).hasSize(8).doesNotContain("@", ":");
    assertThat(TAG).isNotEqualTo(OTHER_TAG).isEqualTo(MarkerValues.runTag(RUN));
    // Short markers stay in Redis's smallest embedded strings (D15): done:<task>@<tag>.
    assertThat(MarkerValues.done("0_11", RUN, false)).hasSizeLessThanOrEqualTo(18);
  }

  @Test
  void aKeyThatExpiredBetweenSetAndGetIsNotOursSoTheEventWaits() {
    assertThat(MarkerValues.read(null, "0_1", RUN)).isEqualTo(Claim.PROCESSING_BY_OTHER);
  }
}
