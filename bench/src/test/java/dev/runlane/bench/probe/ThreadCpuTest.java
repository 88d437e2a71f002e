package dev.runlane.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ThreadCpuTest {

  @Test
  void readsUserAndSystemTicksAfterANameWithSpacesAndParentheses() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    String stat = "4242 (kafka (log) cleaner) S 1 1 1 0 -1 4194560 10 0 0 0 123 45 0 0 20 0 1 0";

    assertThat(ThreadCpu.cpuMillis(stat)).isEqualTo((123 + 45) * 10);
  }

  @Test
  void topListsTheBusiestGroupsBetweenTwoSamples() {
    Map<String, Long> before = Map.of("cleaner", 100L, "stream", 1_000L, "idle", 5L);
    Map<String, Long> after = Map.of("cleaner", 1_900L, "stream", 1_500L, "idle", 5L, "new", 7L);

    assertThat(ThreadCpu.top(before, after, 2)).isEqualTo("cleaner=1800 stream=500");
  }

  @Test
  void theProcessTotalCoversAtLeastTheThreadsListed() {
    if (!System.getProperty("os.name").startsWith("Linux")) {
      assertThat(ThreadCpu.processMillis()).isZero();
      return;
    }
    long listed = ThreadCpu.sample().values().stream().mapToLong(Long::longValue).sum();
    assertThat(ThreadCpu.processMillis()).isPositive().isGreaterThanOrEqualTo(listed);
  }

  @Test
  void thisThreadShowsUpOnLinux() {
    Map<String, Long> sample = ThreadCpu.sample();
    if (System.getProperty("os.name").startsWith("Linux")) {
      assertThat(sample).isNotEmpty();
      assertThat(sample.values()).allMatch(ms -> ms >= 0);
    } else {
      assertThat(sample).isEmpty();
    }
  }
}
