package dev.runlane.processor.topology;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Replay;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupDecision;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Order;
import dev.runlane.processor.dedup.Outcome;
import dev.runlane.processor.dedup.Recorded;
import dev.runlane.processor.runs.RunState;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits each webhook, parks it in the changelogged pending store, and decides parked events in
 * offset order, a batch at a time, with at most one Redis round trip per batch: the done markers of
 * the batch before ride on its claims (design.md §6.3, D22). design.md §6.7 maps each step to the
 * part that does it; this class only walks a record through them.
 *
 * <p>Parking instead of deciding in {@code process()} is what makes Redis affordable; keeping the
 * parked events in a changelogged store (not in memory) is what keeps it exactly-once: a commit can
 * happen between {@code process()} and the next drain, and the committed offsets must then find the
 * events in the store after a failover.
 */
final class RunEventProcessor implements Processor<String, byte[], String, byte[]> {
  /** Block mode: how many batches a task keeps parked for Redis before it stops reading. */
  static final int MAX_PARKED_BATCHES = 100;

  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  private final TopologySettings settings;
  private final EnvelopeParser parser;
  private final ProcessorMetrics metrics;
  private final FaultHook faultHook;
  private final FailedAttempts failures;
  private final SharedRoundTrips roundTrips;
  private final InputReader inputReader;
  private final RedisClaims claims;

  private ProcessorContext<String, byte[]> context;
  private String owner;
  private ReplayRanges ranges;
  private Outputs outputs;
  private Intake intake;
  private ParkedEvents parked;
  private Runs runs;
  private DecidedIds decided;
  private ReorderWindow window; // null without a reorder window
  private int parkedSinceDrain;

  RunEventProcessor(
      TopologySettings settings,
      EnvelopeParser parser,
      Dedup dedup,
      ProcessorMetrics metrics,
      FaultHook faultHook,
      FailedAttempts failures,
      RedisBudget budget,
      SharedRoundTrips roundTrips,
      InputReader inputReader) {
    this.settings = settings;
    this.parser = parser;
    this.metrics = metrics;
    this.faultHook = faultHook;
    this.failures = failures;
    this.roundTrips = roundTrips;
    this.inputReader = inputReader;
    this.claims = new RedisClaims(settings, dedup, budget, metrics, faultHook);
  }

  @Override
  public void init(ProcessorContext<String, byte[]> context) {
    this.context = context;
    KeyValueStore<Long, PendingEvent> pending = context.getStateStore(StoreNames.PENDING);
    if (!UnloggedDeletes.skipFor(pending)) {
      log.warn(
          "task {}: the pending store has no record cache to register with; every decided event"
              + " leaves a tombstone in its changelog (D30)",
          context.taskId());
    }
    // The parts with task state are made anew in every init(): Streams may call init() again on a
    // processor it revives, and a run head cached before a rollback would decide against a state
    // that no longer exists (D33). RedisClaims alone lives as long as the processor.
    this.ranges = new ReplayRanges(settings, context.taskId().partition());
    this.outputs = new Outputs(context, settings, metrics);
    this.intake = new Intake(parser, settings.maxBodyBytes(), ranges, outputs, metrics);
    this.runs = new Runs(context.getStateStore(StoreNames.RUNS), outputs);
    this.decided =
        settings.recordsDecided()
            ? new DecidedIds(
                context.getStateStore(StoreNames.DECIDED),
                settings.decidedHorizon(),
                !settings.readsCopies() && runs.any(),
                context.currentSystemTimeMs())
            : DecidedIds.NONE;
    TopicPartition input =
        new TopicPartition(settings.topics().webhooks(), context.taskId().partition());
    ReorderBuffer held =
        settings.reorders()
            ? new ReorderBuffer(context.getStateStore(StoreNames.HELD), inputReader, input)
            : null;
    this.parked = new ParkedEvents(pending, held != null);
    this.window =
        held == null
            ? null
            : new ReorderWindow(
                held, parked, runs, ranges, metrics, settings, context::currentSystemTimeMs);
    if (window != null) {
      window.awaitRead(
          inputReader.lastUncommittedAsync(input, context.applicationId()),
          read -> inputReader.behindAsync(input, context.applicationId(), read));
    }
    // Stable across restarts and failover; a zombie with the same task id is fenced
    // (design.md §6.1).
    // The task id alone: DEDUP_KEY_PREFIX already separates deployments, and every byte of the
    // value is paid once per key for the done TTL (D15).
    // A later generation's prefix names it in every marker, so that its tasks never read an older
    // generation's marker as their own (D35).
    this.owner = settings.ownerPrefix() + context.taskId().toString();
    claims.join(owner, roundTrips.current(), context::currentSystemTimeMs);
    // Every task of the thread drains on one grid, so that they drain in the same round and the
    // first round trip of the pass carries them all (D45).
    context.schedule(
        Instant.ofEpochMilli(claims.nextDrain(context.currentSystemTimeMs())),
        settings.batchInterval(),
        PunctuationType.WALL_CLOCK_TIME,
        now -> drain());
  }

  @Override
  public void process(Record<String, byte[]> record) {
    metrics.read(record.headers());
    RecordMetadata metadata = context.recordMetadata().orElseThrow();
    if (window != null) {
      window.read(metadata.offset());
    }
    Envelope envelope = intake.admit(record, metadata);
    if (envelope == null) {
      return; // dead-lettered
    }
    long offset = metadata.offset();
    if (window != null) {
      // What this record's decision would release first is due as it is read: releasing it now
      // spares the released events this record's wait for the drain and its Redis round trip.
      // The release stops at the first held event whose run has an event parked, whose decision
      // it could change (D60).
      window.releaseAsRead(record.timestamp());
    }
    parked.park(
        offset,
        new PendingEvent(
            envelope.runId(),
            envelope.requestId(),
            envelope.createdAt(),
            envelope.type(),
            record.timestamp(),
            record.headers(),
            record.value()));
    claims.parked(
        new EventKey(envelope.requestId(), envelope.runId()), ranges.of(offset, record.headers()));
    if (++parkedSinceDrain >= settings.batchSize()) {
      drain();
    }
  }

  /** Decides every parked event, oldest offset first, in batches of at most the batch size. */
  private void drain() {
    parkedSinceDrain = 0;
    claims.drainStarted();
    // With nothing parked (most drains of a task at a low rate per partition) the store is not
    // read; the window's idle clock and the markers owed below still run (D104).
    List<KeyValue<Long, PendingEvent>> events = parked.all();
    int max = settings.batchSize();
    // A run with an event that waits keeps all its later events parked, across batches too.
    Set<String> waitingRuns = events.isEmpty() ? Set.of() : new HashSet<>();
    for (int from = 0; from < events.size(); from += max) {
      if (!decideBatch(events.subList(from, Math.min(events.size(), from + max)), waitingRuns)) {
        if (events.size() >= MAX_PARKED_BATCHES * max) {
          // Block mode while Redis stays away: reading on would grow the pending store, the heap
          // and the next restore without bound. The thread fails instead, as at the block
          // timeout, and its tasks read again from the last commit once replaced (issue 36).
          throw new DedupUnavailableException(
              events.size()
                  + " events parked waiting for Redis (block mode), the most a task keeps ("
                  + MAX_PARKED_BATCHES
                  + " x PROCESSOR_BATCH_SIZE): it stops reading until Redis answers",
              null);
        }
        // Block mode, and this transaction's Redis time is spent: the rest stays parked for the
        // next one, which starts when this commits (D42).
        context.commit();
        break;
      }
    }
    if (window != null) {
      window.drained(context.currentStreamTimeMs(), events.isEmpty());
    }
    claims.drainEnded();
  }

  /**
   * Decides one batch by the decision table (design.md §6.2): claim its ids in one round trip, then
   * decide each event in offset order on its claim and its run's head, then owe the markers.
   *
   * @return false, having decided nothing, if block mode must wait for the next transaction
   */
  private boolean decideBatch(List<KeyValue<Long, PendingEvent>> events, Set<String> waitingRuns) {
    Batch batch = new Batch(events, waitingRuns, ranges, metrics, claims.enabled());
    ThreadRoundTrip.Answer answer = claims.claim(batch.toClaim());
    if (answer == null) {
      return false;
    }
    batch.claimed(answer.claims());
    batch.takenForOtherRuns(claims.takenForOtherRuns(batch.decidedAlone()));
    try {
      if (!answer.markersWritten().isEmpty()) {
        faultHook.afterMarkDone(answer.markersWritten());
      }
      for (KeyValue<Long, PendingEvent> kv : events) {
        decide(kv.key, kv.value, batch, waitingRuns);
      }
      claims.giveBack(batch.claimsUnused());
    } catch (RuntimeException e) {
      claims.giveBack(batch.claimsHeld());
      throw e;
    }
    claims.owe(batch.markers());
    batch.count();
    return true;
  }

  /** Decides one parked event, or leaves it parked when its run waits. */
  private void decide(long offset, PendingEvent event, Batch batch, Set<String> waitingRuns) {
    if (waitingRuns.contains(event.runId())) {
      return; // keeps the run's arrival order behind an event that waits; its claim goes back
    }
    FailedAttempts.Failure failure = failures.exhausted(owner, offset);
    if (failure != null) {
      applyFailed(offset, event, failure);
      return;
    }
    if (window != null) {
      // The records' own times decide, so a replay decides the same.
      window.releaseBeforeDecision(event.timestamp());
    }
    Replay.Range range = ranges.of(offset, event.headers());
    if (window != null && ranges.undecidedBefore(offset, range)) {
      // An earlier generation emitted its run's held ones before this could be decided (D90).
      window.releaseEmittedBefore(event.runId());
    }
    try {
      faultHook.beforeDecide(event.requestId());
      Claim claim = batch.claimOf(event, range);
      RunState.Head current = runs.head(event.runId());
      Order order = RunState.order(current, event.createdAt(), event.requestId());
      Recorded recorded =
          DedupDecision.readsRecord(claim, order) ? decided.find(event) : Recorded.UNKNOWN;
      Outcome table = DedupDecision.decide(claim, order, recorded);
      if (table == Outcome.WAIT) {
        waitingRuns.add(event.runId());
        return;
      }
      Outcome outcome = window == null ? table : window.hold(offset, event, table);
      act(event, current, outcome, range);
      outputs.decisions().decided(offset, event, claim, recorded, table, outcome, range);
      decided.remember(event, claim, outcome);
      parked.unpark(offset, event);
      batch.decided(event, claim, outcome);
    } catch (KafkaException e) {
      throw e; // Kafka's own failures (a fenced producer, a closing task) are never the event's
    } catch (RuntimeException e) {
      metrics.applyFailed(false);
      PoisonEventException failed = failures.failed(owner, offset, event.requestId(), e);
      log.error(
          "request_id={} run_id={}: {}; the transaction aborts and the event is tried again",
          event.requestId(),
          event.runId(),
          failed.getMessage(),
          e);
      throw failed;
    }
    failures.settled(owner, offset);
  }

  private void act(PendingEvent event, RunState.Head current, Outcome outcome, Replay.Range range) {
    if (range == Replay.Range.SILENT || range == Replay.Range.MARKED) {
      metrics.replayed(range == Replay.Range.MARKED);
    }
    switch (outcome) {
      case APPLY -> runs.apply(event, current, range);
      case STALE -> outputs.stale(event, current, range);
      case REUSED, REUSED_STORE -> reused(event, range);
      case HELD -> {} // applied when released
      case DUPLICATE_REDIS, DUPLICATE_STORE ->
          log.debug(
              "duplicate request_id={} run_id={} layer={}",
              event.requestId(),
              event.runId(),
              outcome.layerTag());
      case WAIT -> throw new IllegalStateException("WAIT is not an action");
    }
  }

  /**
   * A copy of a request id that was taken first for another run: never applied to its own run, as a
   * request id names one event of one run, and dead-lettered so that nothing is lost (D41).
   */
  private void reused(PendingEvent event, Replay.Range range) {
    outputs.deadLetter(
        event,
        range,
        "request_id_reused",
        "request_id was first decided for another run than " + event.runId());
  }

  /**
   * An event whose decision failed {@link FailedAttempts#MAX_ATTEMPTS} times: dead-lettered with
   * the last failure, so that it stops failing its partition. Its run's later events are decided as
   * if it never came, which keeps the run moving only forward (G3); re-driven from the DLQ, it is
   * decided like any late copy (D43).
   */
  private void applyFailed(long offset, PendingEvent event, FailedAttempts.Failure failure) {
    Replay.Range range = ranges.of(offset, event.headers());
    metrics.applyFailed(true);
    String detail = failure.attempts() + " attempts failed; the last: " + failure.lastError();
    if (!range.emits()) {
      // A rebuild re-derives silently what an older generation decided, and cannot here: that
      // generation may have applied it, and this run's rebuilt state may now differ from the one
      // before. Dead-lettered all the same, so that it is seen and can be re-driven (issue 36).
      detail = "while a replay re-derived it silently: " + detail;
      range = Replay.Range.LIVE;
    }
    outputs.deadLetter(event, range, "apply_failed", detail);
    outputs.decisions().deadLettered(offset, event, range, "apply_failed");
    parked.unpark(offset, event);
    failures.settled(owner, offset);
  }

  @Override
  public void close() {
    if (runs != null) {
      runs.close(); // a closed task's heads may be of a transaction that aborts
    }
    claims.close();
  }
}
