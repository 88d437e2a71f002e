package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ThreadTasksTest {

  @Test
  void aThreadsDrainsFallOnOneGridWithinTheNextInterval() {
    ThreadTasks.Group group = new ThreadTasks().current();
    long every = 20;
    long first = group.nextDrain(1_764_460_800_000L, every);
    for (long now = 1_764_460_800_000L; now < 1_764_460_800_100L; now++) {
      long next = group.nextDrain(now, every);
      assertThat(next).isGreaterThan(now).isLessThanOrEqualTo(now + every);
      assertThat(Math.floorMod(next - first, every)).as("on the group's grid").isZero();
    }
  }

  @Test
  void eachThreadHasItsOwnGroup() throws Exception {
    ThreadTasks tasks = new ThreadTasks();
    ThreadTasks.Group mine = tasks.current();
    ThreadTasks.Group[] theirs = new ThreadTasks.Group[1];
    Thread other = new Thread(() -> theirs[0] = tasks.current());
    other.start();
    other.join();
    assertThat(theirs[0]).isNotSameAs(mine);
    assertThat(tasks.current()).isSameAs(mine);
  }
}
