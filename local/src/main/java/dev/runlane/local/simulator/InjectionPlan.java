package dev.runlane.local.simulator;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;

/**
 * The deterministic workload: a stream of events, in send order, with the injections decided per
 * event. The same seed gives the same stream. Several runs are active at once and their events
 * interleave; within a run, created_at strictly increases by event, and a share of neighbours is
 * sent newer-first. Not thread-safe: one caller (the simulator's generator thread).
 */
public final class InjectionPlan {

  private static final String ID_ALPHABET =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

  private final Random random;
  private final Injection injection;
  private final int minEventsPerRun;
  private final int maxEventsPerRun;
  private final Instant epoch;
  private final String runPrefix;
  private final List<Deque<EventPlan>> active;
  private long runs;

  /**
   * @param seed the seed of every random choice
   * @param injection what to inject
   * @param concurrentRuns how many runs are interleaved at any time
   * @param minEventsPerRun fewest events of a run (at least 1)
   * @param maxEventsPerRun most events of a run
   * @param epoch created_at of the first run's first event
   */
  public InjectionPlan(
      long seed,
      Injection injection,
      int concurrentRuns,
      int minEventsPerRun,
      int maxEventsPerRun,
      Instant epoch) {
    if (concurrentRuns < 1 || minEventsPerRun < 1 || maxEventsPerRun < minEventsPerRun) {
      throw new IllegalArgumentException(
          "concurrentRuns >= 1 and 1 <= minEventsPerRun <= maxEventsPerRun");
    }
    this.random = new Random(seed);
    this.injection = injection;
    this.minEventsPerRun = minEventsPerRun;
    this.maxEventsPerRun = maxEventsPerRun;
    this.epoch = epoch;
    this.runPrefix = "run_" + randomId(6) + "_";
    this.active = new ArrayList<>(concurrentRuns);
    for (int i = 0; i < concurrentRuns; i++) {
      active.add(new ArrayDeque<>());
    }
  }

  /** The next event to send. */
  public EventPlan next() {
    int slot = random.nextInt(active.size());
    Deque<EventPlan> queue = active.get(slot);
    if (queue.isEmpty()) {
      queue.addAll(newRun());
    }
    return queue.poll();
  }

  /** How many runs were started so far. */
  public long runsStarted() {
    return runs;
  }

  private List<EventPlan> newRun() {
    long index = runs++;
    String runId = runPrefix + index;
    int count = minEventsPerRun + random.nextInt(maxEventsPerRun - minEventsPerRun + 1);
    // Runs start a second apart; events of a run 1-1000 ms apart (all distinct, increasing).
    Instant at = epoch.plusSeconds(index).plusMillis(random.nextInt(1000));
    List<SimulatedEvent> events = new ArrayList<>(count);
    for (int seq = 0; seq < count; seq++) {
      at = at.plusMillis(1 + random.nextInt(1000));
      events.add(new SimulatedEvent(runId, "req_" + randomId(20), at, type(seq, count), seq));
    }
    boolean[] reordered = new boolean[count];
    for (int i = 0; i + 1 < count; i++) {
      if (random.nextDouble() < injection.reorderShare()) {
        SimulatedEvent older = events.get(i);
        events.set(i, events.get(i + 1));
        events.set(i + 1, older);
        reordered[i + 1] = true;
        i++; // the older event moved one place; do not move it again
      }
    }
    List<EventPlan> plans = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      plans.add(
          new EventPlan(
              events.get(i), concurrentCopies(), redeliveryDelays(), slowAck(), reordered[i]));
    }
    return plans;
  }

  private int concurrentCopies() {
    if (random.nextDouble() >= injection.concurrentShare()) {
      return 1;
    }
    return 2 + random.nextInt(injection.maxConcurrentCopies() - 1);
  }

  private List<Duration> redeliveryDelays() {
    if (random.nextDouble() >= injection.redeliveryShare()) {
      return List.of();
    }
    int n = 1 + random.nextInt(injection.maxRedeliveries());
    long maxMillis = injection.maxRedeliveryDelay().toMillis();
    List<Duration> delays = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      delays.add(Duration.ofMillis(1000 + (long) (random.nextDouble() * (maxMillis - 1000))));
    }
    return delays;
  }

  private boolean slowAck() {
    return random.nextDouble() < injection.slowAckShare();
  }

  private static String type(int seq, int count) {
    if (seq == 0) {
      return "run.created";
    }
    if (seq == count - 1) {
      return count % 5 == 0 ? "run.failed" : "run.completed";
    }
    return seq == 1 ? "run.started" : "run.progressed";
  }

  private String randomId(int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(ID_ALPHABET.charAt(random.nextInt(ID_ALPHABET.length())));
    }
    return sb.toString();
  }
}
