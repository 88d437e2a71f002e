package dev.runlane.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JitWarmupTest {

  @Test
  void aRoundThatCompilesNothingEndsTheWarmUp() throws Exception {
    AtomicInteger rounds = new AtomicInteger();
    String note =
        JitWarmup.untilSettled(Duration.ofMinutes(5), 2, "nothing", rounds::incrementAndGet);
    assertThat(rounds).hasValue(1);
    assertThat(note).startsWith("warm-up: 0 s of nothing").doesNotContain("cap reached");
  }

  @Test
  void aCapOfZeroStillRunsOneRound() throws Exception {
    AtomicInteger rounds = new AtomicInteger();
    JitWarmup.untilSettled(Duration.ZERO, 1, "nothing", rounds::incrementAndGet);
    assertThat(rounds).hasValue(1);
  }
}
