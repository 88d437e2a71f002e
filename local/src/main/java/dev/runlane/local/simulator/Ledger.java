package dev.runlane.local.simulator;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the simulator sent and what the ingress acknowledged. Thread-safe; counters are live (for a
 * progress line), {@link #events()} is a snapshot for verification.
 */
public final class Ledger {

  /** Why an attempt did not count as delivered. */
  public enum Failure {
    /** A non-2xx, non-3xx status (503 while Kafka is down, 401, ...). */
    HTTP_ERROR,
    /** A 3xx: Sume never follows redirects and counts them as failures. */
    REDIRECT,
    /** No answer within the attempt timeout (includes the injected slow acks). */
    TIMEOUT,
    /** Connection refused or reset: the ingress was not there. */
    CONNECTION
  }

  /** One event: what was sent and whether any delivery of it was acked. */
  public record SentEvent(SimulatedEvent event, boolean acked, int attempts, int acks) {}

  private static final class Entry {
    final SimulatedEvent event;
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger acks = new AtomicInteger();

    Entry(SimulatedEvent event) {
      this.event = event;
    }
  }

  private final ConcurrentMap<String, Entry> entries = new ConcurrentHashMap<>();
  private final LongAdder attempts = new LongAdder();
  private final LongAdder retries = new LongAdder();
  private final LongAdder acks = new LongAdder();
  private final LongAdder ackedEvents = new LongAdder();
  private final LongAdder deliveries = new LongAdder();
  private final LongAdder gaveUp = new LongAdder();
  private final LongAdder concurrentCopies = new LongAdder();
  private final LongAdder redeliveries = new LongAdder();
  private final LongAdder reordered = new LongAdder();
  private final LongAdder slowAcks = new LongAdder();
  private final LongAdder[] failures = new LongAdder[Failure.values().length];

  public Ledger() {
    for (int i = 0; i < failures.length; i++) {
      failures[i] = new LongAdder();
    }
  }

  void planned(EventPlan plan) {
    entries.putIfAbsent(plan.event().requestId(), new Entry(plan.event()));
    concurrentCopies.add(plan.concurrentCopies() - 1L);
    if (plan.reordered()) {
      reordered.increment();
    }
  }

  void deliveryStarted(boolean redelivery) {
    deliveries.increment();
    if (redelivery) {
      redeliveries.increment();
    }
  }

  void attempt(String requestId, int attemptNumber) {
    entries.get(requestId).attempts.incrementAndGet();
    attempts.increment();
    if (attemptNumber > 1) {
      retries.increment();
    }
  }

  /** A short-patience attempt that really timed out (the ingress may still have acked it). */
  void slowAck() {
    slowAcks.increment();
  }

  /** Records an ack; true if it is the event's first. */
  boolean acked(String requestId) {
    acks.increment();
    boolean first = entries.get(requestId).acks.getAndIncrement() == 0;
    if (first) {
      ackedEvents.increment();
    }
    return first;
  }

  void failed(Failure failure) {
    failures[failure.ordinal()].increment();
  }

  void gaveUp() {
    gaveUp.increment();
  }

  /** Events generated (distinct request ids). */
  public long events() {
    return entries.size();
  }

  /** Events with at least one acked delivery. */
  public long ackedEvents() {
    return ackedEvents.sum();
  }

  /** Deliveries started (each runs its own retry schedule). */
  public long deliveries() {
    return deliveries.sum();
  }

  /** HTTP attempts made. */
  public long attempts() {
    return attempts.sum();
  }

  /** Attempts after the first of their delivery. */
  public long retries() {
    return retries.sum();
  }

  /** 2xx answers (an event delivered twice and acked twice counts twice). */
  public long acks() {
    return acks.sum();
  }

  /** Deliveries that exhausted every attempt without an ack. */
  public long gaveUpDeliveries() {
    return gaveUp.sum();
  }

  /** Extra simultaneous copies of first deliveries. */
  public long concurrentCopies() {
    return concurrentCopies.sum();
  }

  /** Extra deliveries of events that were already acked. */
  public long redeliveries() {
    return redeliveries.sum();
  }

  /** Events sent after a newer event of their run. */
  public long reordered() {
    return reordered.sum();
  }

  /** Attempts that gave up before the ingress could answer (injected slow acks). */
  public long slowAcks() {
    return slowAcks.sum();
  }

  /** Failed attempts of one kind. */
  public long failures(Failure failure) {
    return failures[failure.ordinal()].sum();
  }

  /** Failed attempts of every kind. */
  public long failures() {
    long total = 0;
    for (LongAdder f : failures) {
      total += f.sum();
    }
    return total;
  }

  /** A snapshot of every event. */
  public List<SentEvent> snapshot() {
    return entries.values().stream()
        .map(e -> new SentEvent(e.event, e.acks.get() > 0, e.attempts.get(), e.acks.get()))
        .toList();
  }
}
