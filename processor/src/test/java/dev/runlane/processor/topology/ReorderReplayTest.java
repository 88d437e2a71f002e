package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The reorder window decides on the records' own timestamps (D46): the same input gives the same
 * {@code sume.events}, each run's events in the same order, however it is batched and on every run
 * of a fresh processor over it. How runs interleave may move with the batches: a run's held events
 * can be released as a later record is read, ahead of other runs' parked events (D60).
 */
class ReorderReplayTest {
  private static final Instant T0 = WindowPipe.T0;
  private static final long T0_MS = T0.toEpochMilli();
  private static final Duration WINDOW = Duration.ofSeconds(1);

  @Test
  void theSameInputGivesEachRunTheSameEventsInTheSameOrderWhateverTheBatches() {
    List<TestRecord<String, byte[]>> input = shuffledRuns(new Random(7));
    List<String> live = run(input, 1);
    assertThat(live).hasSizeGreaterThan(input.size() / 3);
    assertThat(run(input, 1)).isEqualTo(live);
    assertThat(byRun(run(input, 16))).isEqualTo(byRun(live));
    assertThat(byRun(run(input, 256))).isEqualTo(byRun(live));
  }

  @Test
  void aHeldEventIsReleasedAsARecordAWindowLaterIsReadNotWhenThatRecordIsDecided() {
    try (WindowPipe pipe = pipe(256)) {
      pipe.send(record("run-1", "t1", 1, T0_MS));
      pipe.drain(); // t1 held
      pipe.send(record("run-2", "u1", 1, T0_MS + 1_000));
      // No drain: u1 is only read and parked, and t1's window has passed at u1's time.
      assertThat(pipe.applied()).containsExactly("run-1/t1");
    }
  }

  @Test
  void aRunWithAnEventParkedKeepsItsHeldEventsUntilThatEventIsDecided() {
    try (WindowPipe pipe = pipe(256)) {
      pipe.send(record("run-1", "t3", 3, T0_MS));
      pipe.drain(); // t3 held
      pipe.send(record("run-1", "t1", 1, T0_MS + 500)); // parked, not decided yet
      pipe.send(record("run-2", "u1", 1, T0_MS + 1_000));
      // Released as u1 was read, t3 would have made the parked t1 stale.
      assertThat(pipe.applied()).isEmpty();
      pipe.drain(); // t1 held, then u1's decision releases t1 and t3, in that order
      assertThat(pipe.applied()).containsExactly("run-1/t1", "run-1/t3");
    }
  }

  @Test
  void theReleaseDelayCountsHowLongPastItsWindowEachDueEventWaited() {
    // The wall clock starts 5 ms past t3's window; every drain moves it 20 ms on.
    try (WindowPipe pipe = pipe(256, Instant.ofEpochMilli(T0_MS + 1_005))) {
      pipe.send(record("run-1", "t3", 3, T0_MS));
      pipe.send(record("run-1", "t1", 1, T0_MS + 500)); // older: released with t3, not due itself
      pipe.drain(); // both held
      pipe.send(record("run-2", "u1", 1, T0_MS + 1_000)); // releases t1 and t3 as it is read
      assertThat(pipe.applied()).containsExactly("run-1/t1", "run-1/t3");
      Timer delay = pipe.registry.find(ProcessorMetrics.RELEASE_DELAY).timer();
      assertThat(delay.count()).as("released after their window").isEqualTo(1);
      assertThat(delay.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(25.0);
    }
  }

  /** Each run's events in output order. */
  private static Map<String, List<String>> byRun(List<String> events) {
    Map<String, List<String>> out = new TreeMap<>();
    for (String e : events) {
      out.computeIfAbsent(e.substring(0, e.indexOf('/')), r -> new ArrayList<>()).add(e);
    }
    return out;
  }

  @Test
  void eventsArrivingWithinTheWindowAreAppliedInCreatedAtOrder() {
    List<TestRecord<String, byte[]>> input = new ArrayList<>();
    input.add(record("run-1", "t3", 3, T0_MS));
    input.add(record("run-1", "t1", 1, T0_MS + 200));
    input.add(record("run-1", "t2", 2, T0_MS + 400));
    // Arrives after t3's window passed (and moves the task's time past it): too late.
    input.add(record("run-1", "t0", 0, T0_MS + 2_000));
    assertThat(run(input, 1)).containsExactly("run-1/t1", "run-1/t2", "run-1/t3");
  }

  /** Ten events for each of 30 runs, arriving shuffled over a few seconds of record time. */
  private static List<TestRecord<String, byte[]>> shuffledRuns(Random random) {
    List<TestRecord<String, byte[]>> out = new ArrayList<>();
    for (int r = 0; r < 30; r++) {
      for (int e = 0; e < 10; e++) {
        out.add(record("run-" + r, "r" + r + "-e" + e, e, 0));
      }
    }
    java.util.Collections.shuffle(out, random);
    List<TestRecord<String, byte[]>> timed = new ArrayList<>();
    long at = T0.toEpochMilli();
    for (TestRecord<String, byte[]> r : out) {
      at += random.nextInt(30);
      timed.add(new TestRecord<>(r.key(), r.value(), r.headers(), Instant.ofEpochMilli(at)));
    }
    return timed;
  }

  private static TestRecord<String, byte[]> record(
      String runId, String requestId, int second, long arrivalMs) {
    return WindowPipe.record(runId, requestId, second, arrivalMs);
  }

  /** Pipes {@code input} through a fresh processor; the applied events as run/request. */
  private static List<String> run(List<TestRecord<String, byte[]>> input, int batchSize) {
    try (WindowPipe pipe = pipe(batchSize)) {
      input.forEach(pipe::send);
      // The end of the input: the task's time moves a window on, as the next record would.
      pipe.drain();
      pipe.send(record("run-end", "end", 0, input.get(input.size() - 1).timestamp() + 5_000));
      pipe.drain(); // decides what is parked
      pipe.drain(); // idle: releases what is held
      return pipe.applied();
    }
  }

  /** A fresh processor with a window, batches of {@code batchSize}, wall clock now. */
  private static WindowPipe pipe(int batchSize) {
    return pipe(batchSize, Instant.now());
  }

  private static WindowPipe pipe(int batchSize, Instant wallClock) {
    return new WindowPipe(
        TestTopology.windowed(batchSize, Duration.ofMillis(20), WINDOW), wallClock);
  }
}
