package dev.runlane.processor.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class RunHeadsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final Map<String, RunState.Head> store = new HashMap<>();
  private final List<String> reads = new ArrayList<>();
  private final Function<String, RunState.Head> reader =
      runId -> {
        reads.add(runId);
        return store.get(runId);
      };

  @Test
  void aRunIsReadFromTheStoreOnceAndThenServedFromTheCache() {
    store.put("run-1", new RunState.Head("req-1", T0, 1));
    RunHeads heads = new RunHeads(4);

    assertThat(heads.get("run-1", reader)).isEqualTo(new RunState.Head("req-1", T0, 1));
    assertThat(heads.get("run-1", reader)).isEqualTo(new RunState.Head("req-1", T0, 1));

    assertThat(reads).containsExactly("run-1");
  }

  @Test
  void aRunTheStoreDoesNotHoldIsNullAndIsReadOnce() {
    RunHeads heads = new RunHeads(4);

    assertThat(heads.get("new-run", reader)).isNull();
    assertThat(heads.get("new-run", reader)).isNull();

    assertThat(reads).containsExactly("new-run");
  }

  @Test
  void whatWasAppliedIsWhatTheNextEventSees() {
    RunHeads heads = new RunHeads(4);
    assertThat(heads.get("run-1", reader)).isNull();

    heads.applied("run-1", new RunState.Head("req-2", T0.plusSeconds(1), 1));

    assertThat(heads.get("run-1", reader))
        .isEqualTo(new RunState.Head("req-2", T0.plusSeconds(1), 1));
    assertThat(reads).containsExactly("run-1");
  }

  @Test
  void theLeastRecentlyUsedRunIsEvictedAndReadAgainFromTheStore() {
    store.put("run-1", new RunState.Head("req-1", T0, 1));
    store.put("run-2", new RunState.Head("req-2", T0, 1));
    store.put("run-3", new RunState.Head("req-3", T0, 1));
    RunHeads heads = new RunHeads(2);
    heads.get("run-1", reader);
    heads.get("run-2", reader);
    heads.get("run-1", reader); // run-2 is now the least recently used

    heads.get("run-3", reader);
    heads.get("run-1", reader);
    heads.get("run-2", reader);

    assertThat(reads).containsExactly("run-1", "run-2", "run-3", "run-2");
    assertThat(heads.size()).isEqualTo(2);
  }

  @Test
  void aCacheMustHoldAtLeastOneRun() {
    assertThatThrownBy(() -> new RunHeads(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
  }
}
