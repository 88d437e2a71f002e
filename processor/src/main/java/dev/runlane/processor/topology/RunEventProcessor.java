package dev.runlane.processor.topology;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupDecision;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import dev.runlane.processor.dedup.Outcome;
import dev.runlane.processor.runs.RunHeads;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes each webhook, parks it in the changelogged pending store, and decides parked events in
 * offset order, a batch at a time, with at most one Redis round trip per batch: the done markers of
 * the batch before ride on its claims (design.md §6.3, D22).
 *
 * <p>Parking instead of deciding in {@code process()} is what makes Redis affordable; keeping the
 * parked events in a changelogged store (not in memory) is what keeps it exactly-once: a commit can
 * happen between {@code process()} and the next drain, and the committed offsets must then find the
 * events in the store after a failover.
 */
final class RunEventProcessor implements Processor<String, byte[], String, byte[]> {
  private static final Logger log = LoggerFactory.getLogger(RunEventProcessor.class);

  /**
   * Run heads cached per task: about 2 MiB each (a head, its run id and the map's entry, ~250 B).
   * The bench's 100k runs over 12 tasks nearly fit (about 8,300 a task); a deployment with more
   * runs active at once than this reads the rest from the store, as before.
   */
  static final int CACHED_RUN_HEADS = 8_192;

  /**
   * Input headers past this would not fit our outputs once we add ours: records are sized for a
   * body plus {@link TopicEnsurer#RECORD_OVERHEAD_BYTES}. Such a record goes the way of a body that
   * is too large, rather than fail the producer and the stream thread with it.
   */
  static final int MAX_HEADER_BYTES = TopicEnsurer.RECORD_OVERHEAD_BYTES * 3 / 4;

  /**
   * The most one gap between drains adds to a task's idle time. Wall-clock punctuations come once
   * per stream-thread loop, and an idle thread's poll waits up to {@code poll.ms} (100 ms) for
   * records, so drains of an idle task are up to ~100 ms apart; anything longer is the thread busy.
   */
  static final long MAX_IDLE_STEP_MS = 250;

  /** Between two attempts to reach Redis in block mode. */
  private static final Duration BLOCK_RETRY = Duration.ofMillis(100);

  private final TopologySettings settings;
  private final EnvelopeParser parser;
  private final Dedup dedup;
  private final ProcessorMetrics metrics;
  private final FaultHook faultHook;
  private final FailedAttempts failures;
  private final RedisBudget budget;
  private final SharedRoundTrips roundTrips;
  private final InputReader inputReader;

  private ProcessorContext<String, byte[]> context;
  private KeyValueStore<Long, PendingEvent> pending;
  private KeyValueStore<String, byte[]> runs;
  private RunHeads heads;
  private ReorderBuffer held; // null without a reorder window
  private ParkedRuns parkedRuns; // null without a reorder window
  private String owner;
  private int parkedSinceDrain;

  /** This stream thread's round trips, which hold this task's markers and parked ids (D45). */
  private ThreadRoundTrip roundTrip;

  private long drains;

  /** The drain in which the oldest marker this task owes was queued. */
  private long doneLaterDrain;

  /** The task's stream time at the last drain (D46). */
  private long streamTimeMs = Long.MIN_VALUE;

  /**
   * How long this task has been idle since its stream time last moved: the sum of the gaps between
   * its drains, each counted up to {@link #MAX_IDLE_STEP_MS}. A longer gap is the stream thread
   * busy elsewhere (initializing another task, reading its held events back), not this partition
   * being idle (D49).
   */
  private long idleMs;

  /** When this task last drained, or -1 before its first drain since {@code init()}. */
  private long lastDrainAtMs = -1;

  /** In block mode, since when Redis has not answered this task (System.nanoTime), or -1. */
  private long blockedSinceNanos = -1;

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
    this.dedup = dedup;
    this.metrics = metrics;
    this.faultHook = faultHook;
    this.failures = failures;
    this.budget = budget;
    this.roundTrips = roundTrips;
    this.inputReader = inputReader;
  }

  @Override
  public void init(ProcessorContext<String, byte[]> context) {
    this.context = context;
    this.pending = context.getStateStore(StoreNames.PENDING);
    if (!UnloggedDeletes.skipFor(pending)) {
      log.warn(
          "task {}: the pending store has no record cache to register with; every decided event"
              + " leaves a tombstone in its changelog (D30)",
          context.taskId());
    }
    this.runs = context.getStateStore(StoreNames.RUNS);
    this.held =
        settings.reorders()
            ? new ReorderBuffer(
                context.getStateStore(StoreNames.HELD),
                inputReader,
                new TopicPartition(settings.topics().webhooks(), context.taskId().partition()))
            : null;
    if (held != null) {
      this.parkedRuns = new ParkedRuns();
      try (KeyValueIterator<Long, PendingEvent> it = pending.all()) {
        it.forEachRemaining(kv -> parkedRuns.parked(kv.value.runId()));
      }
    }
    // New with every init(): a head cached before the store was rolled back or restored would
    // decide against a state that no longer exists. Streams may call init() again on a processor
    // it revives rather than build a new one (D33).
    this.heads = new RunHeads(CACHED_RUN_HEADS);
    // Stable across restarts and failover; a zombie with the same task id is fenced
    // (design.md §6.1).
    // The task id alone: DEDUP_KEY_PREFIX already separates deployments, and every byte of the
    // value is paid once per key for the done TTL (D15).
    // A later generation's prefix names it in every marker, so that its tasks never read an older
    // generation's marker as their own (D35).
    this.owner = settings.ownerPrefix() + context.taskId().toString();
    this.roundTrip = roundTrips.current();
    roundTrip.join(owner);
    // The idle clock starts at the first drain, not here: the stream thread initializes its other
    // tasks after this one (reading their held events back takes a moment each), and that time is
    // no idleness.
    this.idleMs = 0;
    this.lastDrainAtMs = -1;
    // Every task of the thread drains on one grid, so that they drain in the same round and the
    // first round trip of the pass carries them all (D45).
    long first =
        roundTrip.nextDrain(context.currentSystemTimeMs(), settings.batchInterval().toMillis());
    context.schedule(
        Instant.ofEpochMilli(first),
        settings.batchInterval(),
        PunctuationType.WALL_CLOCK_TIME,
        now -> drain());
  }

  @Override
  public void process(Record<String, byte[]> record) {
    metrics.read(record.headers());
    if ((record.value() != null && record.value().length > settings.maxBodyBytes())
        || headerBytes(record.headers()) > MAX_HEADER_BYTES) {
      tooLarge(record);
      return;
    }
    long offset = context.recordMetadata().orElseThrow().offset();
    Envelope envelope;
    try {
      envelope = parser.parse(record.value() == null ? new byte[0] : record.value());
    } catch (EnvelopeException e) {
      toDeadLetters(record, offset, e.code(), e.getMessage());
      return;
    }
    if (!envelope.runId().equals(record.key())) {
      // The key decides the partition, so the run's order guard lives with the key's partition.
      toDeadLetters(
          record,
          offset,
          "key_mismatch",
          record.key() == null
              ? "record key is missing or not UTF-8; the envelope's run id is " + envelope.runId()
              : "record key is not the envelope's run id");
      return;
    }
    if (held != null) {
      // What this record's decision would release first is due as it is read: releasing it now
      // spares the released events this record's wait for the drain and its Redis round trip.
      // The release stops at the first held event whose run has an event parked, whose decision
      // it could change (D60).
      releaseDue(record.timestamp(), true);
      parkedRuns.parked(envelope.runId());
    }
    pending.put(
        offset,
        new PendingEvent(
            envelope.runId(),
            envelope.requestId(),
            envelope.createdAt(),
            envelope.type(),
            record.timestamp(),
            record.headers(),
            record.value()));
    if (dedup.enabled() && !rangeOf(offset, record.headers()).storeAlone()) {
      roundTrip.parked(owner, new EventKey(envelope.requestId(), envelope.runId()));
    }
    if (++parkedSinceDrain >= settings.batchSize()) {
      drain();
    }
  }

  /** Decides every parked event, oldest offset first, in batches of at most the batch size. */
  private void drain() {
    parkedSinceDrain = 0;
    drains++;
    List<KeyValue<Long, PendingEvent>> parked = new ArrayList<>();
    try (KeyValueIterator<Long, PendingEvent> it = pending.all()) {
      while (it.hasNext()) {
        parked.add(it.next());
      }
    }
    int max = settings.batchSize();
    // A run with an event that waits keeps all its later events parked, across batches too.
    Set<String> waitingRuns = new HashSet<>();
    for (int from = 0; from < parked.size(); from += max) {
      if (!decideBatch(parked.subList(from, Math.min(parked.size(), from + max)), waitingRuns)) {
        // Block mode, and this transaction's Redis time is spent: the rest stays parked for the
        // next one, which starts when this commits (D42).
        context.commit();
        break;
      }
    }
    if (held != null) {
      long now = context.currentSystemTimeMs();
      if (lastDrainAtMs < 0 || context.currentStreamTimeMs() > streamTimeMs) {
        streamTimeMs = context.currentStreamTimeMs();
        idleMs = 0;
      } else {
        idleMs += Math.min(now - lastDrainAtMs, MAX_IDLE_STEP_MS);
      }
      lastDrainAtMs = now;
      if (parked.isEmpty() && held.size() > 0) {
        // Nothing arrives to move this task's time on: let it move with the wall clock from where
        // its records left it, so that an idle partition does not hold its events for ever. Not
        // from the wall clock itself: after a restart the task drains before it has read again
        // what its last commit did not cover, and releasing every restored event at once would
        // make those stale (D46).
        long base = streamTimeMs >= 0 ? streamTimeMs : held.earliestArrival();
        releaseDue(base + idleMs, false);
      }
      while (held.size() > settings.maxHeld()) {
        release(held.releaseEarliest(), true);
      }
    }
    // Claims a peer took for events whose run waits: give them back, as for a batch's own.
    release(roundTrip.takeUnused(owner));
    // A marker waits for one drain at most: with nothing to claim since, it goes alone.
    if (roundTrip.owes(owner) && doneLaterDrain < drains && budget.allows()) {
      flushDone();
    }
  }

  /**
   * Decides one batch by the decision table (design.md §6.2): claim its ids in one round trip, then
   * decide each event in offset order on its claim and its run's head, then owe the markers.
   *
   * @return false, having decided nothing, if block mode must wait for the next transaction
   */
  private boolean decideBatch(List<KeyValue<Long, PendingEvent>> batch, Set<String> waitingRuns) {
    Batch decisions = new Batch(batch, waitingRuns);
    if (!claim(decisions)) {
      return false;
    }
    try {
      if (!decisions.markersWritten.isEmpty()) {
        faultHook.afterMarkDone(decisions.markersWritten);
      }
      for (KeyValue<Long, PendingEvent> kv : batch) {
        decide(kv.key, kv.value, decisions, waitingRuns);
      }
      release(decisions.unused());
    } catch (RuntimeException e) {
      release(decisions.held());
      throw e;
    }
    decisions.finish();
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
    if (held != null) {
      // What was due when this event arrived goes first, as it would have gone had the task
      // decided at that instant: the records' own times decide, so a replay decides the same.
      releaseDue(event.timestamp(), false);
    }
    Replay.Range range = rangeOf(offset, event.headers());
    try {
      faultHook.beforeDecide(event.requestId());
      Claim claim = batch.claimOf(event, range);
      RunState.Head current = heads.get(event.runId(), this::storedHead);
      Outcome outcome =
          DedupDecision.decide(
              claim, RunState.order(current, event.createdAt(), event.requestId()));
      if (outcome == Outcome.WAIT) {
        waitingRuns.add(event.runId());
        return;
      }
      if (held != null) {
        outcome = window(offset, event, outcome);
      }
      act(event, current, outcome, range);
      unpark(offset, event);
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

  /**
   * With a reorder window, an event to apply is held instead, unless this very event is held
   * already (a duplicate, caught by the store); one older than its run's state came too late for
   * the window and is stale, as without one (D46).
   */
  private Outcome window(long offset, PendingEvent event, Outcome outcome) {
    if (outcome == Outcome.STALE) {
      metrics.late();
      return outcome;
    }
    if (outcome != Outcome.APPLY) {
      return outcome;
    }
    if (held.holds(event)) {
      return Outcome.DUPLICATE_STORE;
    }
    held.hold(offset, event);
    return Outcome.HELD;
  }

  /**
   * Releases every held event that arrived at least a window before {@code nowMs}, earliest first.
   *
   * <p>{@code aheadOfParked}: called as a record is read, before the events parked ahead of it are
   * decided. Releasing a run's events changes its head, which a parked event of that run would then
   * be decided against, so the release stops at the first held event whose run has one parked; the
   * rest go when that record is decided, as they always did. Other runs' releases commute with the
   * parked decisions, so each run is decided as a replay in offset order decides it; only the
   * interleaving of runs in the output moves. A record whose decision is skipped (its run waits for
   * another task's claim, or its attempts are spent) released nothing before; read, it does (D60).
   */
  private void releaseDue(long nowMs, boolean aheadOfParked) {
    long dueBefore = nowMs - settings.reorderWindow().toMillis();
    while (held.size() > 0
        && held.earliestArrival() <= dueBefore
        && !(aheadOfParked && parkedRuns.has(held.earliestRun()))) {
      release(held.releaseEarliest(), false);
    }
  }

  /**
   * Applies released events, oldest first. Each is newer than its run's state: it was when held,
   * and a run's older held events are released with or before it.
   */
  private void release(List<ReorderBuffer.Held> events, boolean early) {
    long now = context.currentSystemTimeMs();
    for (ReorderBuffer.Held h : events) {
      PendingEvent event = h.event();
      if (!early) {
        metrics.releasedAfter(event.timestamp() + settings.reorderWindow().toMillis(), now);
      }
      RunState.Head current = heads.get(event.runId(), this::storedHead);
      apply(event, current, rangeOf(h.offset(), event.headers()));
    }
    metrics.outcome(Outcome.APPLY, events.size());
    metrics.released(early, events.size());
  }

  /**
   * One batch's decisions: which run each id was first seen for, the claims Redis answered, and the
   * markers and counts they leave.
   */
  private final class Batch {
    private final int size;

    /** Each id's run at its first event in the batch whose run does not wait already. */
    private final Map<String, String> firstRun = new HashMap<>();

    private final List<EventKey> toClaim = new ArrayList<>();
    private Map<String, Claim> claims = Map.of();
    private List<String> markersWritten = List.of();
    private final Set<String> decidedIds = new HashSet<>();
    private final Map<String, Marker> markers = new LinkedHashMap<>();
    private final Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
    private int degraded; // decided without Redis's answer

    Batch(List<KeyValue<Long, PendingEvent>> batch, Set<String> waitingRuns) {
      this.size = batch.size();
      Set<String> asked = new HashSet<>();
      for (KeyValue<Long, PendingEvent> kv : batch) {
        PendingEvent event = kv.value;
        if (waitingRuns.contains(event.runId())) {
          continue;
        }
        firstRun.putIfAbsent(event.requestId(), event.runId());
        if (!rangeOf(kv.key, event.headers()).storeAlone() && asked.add(event.requestId())) {
          toClaim.add(new EventKey(event.requestId(), event.runId()));
        }
      }
    }

    /**
     * The claim to decide {@code event} with. A request id names one event of one run: a copy that
     * names another run than the id's first event in the batch is that run's reuse, whatever Redis
     * says (D41). Otherwise Redis's answer, with a second copy of an id a duplicate of the first,
     * which holds this task's fresh claim.
     */
    Claim claimOf(PendingEvent event, Replay.Range range) {
      if (!event.runId().equals(firstRun.get(event.requestId()))) {
        return Claim.OTHER_RUN;
      }
      if (range.storeAlone()) {
        return Claim.REPLAY;
      }
      Claim claim = claims.get(event.requestId());
      if (claim != Claim.UNAVAILABLE && !decidedIds.add(event.requestId())) {
        return Claim.EARLIER_IN_BATCH;
      }
      return claim;
    }

    void decided(PendingEvent event, Claim claim, Outcome outcome) {
      counts.merge(outcome, 1, Integer::sum);
      if (claim == Claim.UNAVAILABLE) {
        degraded++;
      } else if (claim == Claim.UNKNOWN_MARKER) {
        metrics.unknownMarker();
        log.warn(
            "request_id={} run_id={}: its Redis key holds a value that is no runlane marker;"
                + " decided on the run store alone (another deployment sharing"
                + " DEDUP_KEY_PREFIX?)",
            event.requestId(),
            event.runId());
      }
      if (claim.heldByThisTask()) {
        markers.remove(event.requestId());
        markers.put(
            event.requestId(),
            new Marker(new EventKey(event.requestId(), event.runId()), outcome == Outcome.STALE));
      }
    }

    /** The claims this task took and holds, all of which go back if the batch fails. */
    List<EventKey> held() {
      List<EventKey> held = new ArrayList<>();
      for (EventKey key : toClaim) {
        Claim claim = claims.get(key.requestId());
        if (claim != null && claim.releasable()) {
          held.add(key);
        }
      }
      return held;
    }

    /** The claims taken for events the batch did not decide (their run waits): given back. */
    List<EventKey> unused() {
      List<EventKey> unused = held();
      unused.removeIf(key -> markers.containsKey(key.requestId()));
      return unused;
    }

    /** Owes the batch's markers to the next round trip, and counts its decisions. */
    void finish() {
      if (!markers.isEmpty()) {
        if (!roundTrip.owes(owner)) {
          doneLaterDrain = drains;
        }
        roundTrip.owe(owner, markers.values()); // decided again: the latest outcome counts
      }
      counts.forEach(metrics::outcome);
      if (degraded > 0 && dedup.enabled()) {
        metrics.degraded(degraded);
      }
      metrics.batch(size);
    }
  }

  /**
   * Claims the batch's ids: with the answers another task's round trip took for them, or in one
   * round trip that also carries the thread's other tasks (D45). Every claim is {@code UNAVAILABLE}
   * when Redis is not asked or does not answer in degrade mode.
   *
   * @return false when block mode must wait for the next transaction
   */
  private boolean claim(Batch batch) {
    List<EventKey> events = batch.toClaim;
    if (events.isEmpty()) {
      return true;
    }
    boolean degrade = settings.redisFailureMode() == RedisFailureMode.DEGRADE;
    while (dedup.enabled()) {
      if (!budget.allows()) {
        metrics.redisBudgetSpent();
        if (degrade) {
          break; // decided on the run store alone until the transaction commits
        }
        return false;
      }
      long start = System.nanoTime();
      try {
        ThreadRoundTrip.Answer answer =
            roundTrip.claim(
                owner, events, context.currentSystemTimeMs(), settings.batchInterval().toMillis());
        budget.spend(System.nanoTime() - start);
        blockedSinceNanos = -1;
        batch.claims = answer.claims();
        batch.markersWritten = answer.markersWritten();
        return true;
      } catch (DedupUnavailableException e) {
        budget.spend(System.nanoTime() - start);
        if (degrade) {
          break; // the markers wait for Redis to answer again
        }
        waitForRedis(e);
      }
    }
    Map<String, Claim> unavailable = new HashMap<>(events.size() * 2);
    events.forEach(event -> unavailable.put(event.requestId(), Claim.UNAVAILABLE));
    batch.claims = unavailable;
    return true;
  }

  /**
   * Block mode: waits a moment before asking Redis again, or fails the thread once Redis has not
   * answered for the block timeout, so that its tasks restart from the last commit.
   */
  private void waitForRedis(DedupUnavailableException e) {
    long now = System.nanoTime();
    if (blockedSinceNanos < 0) {
      blockedSinceNanos = now;
    }
    if (now - blockedSinceNanos > settings.redisBlockTimeout().toNanos()) {
      throw new IllegalStateException(
          "redis unavailable for longer than REDIS_BLOCK_TIMEOUT_SECONDS in block mode", e);
    }
    java.util.concurrent.locks.LockSupport.parkNanos(BLOCK_RETRY.toNanos());
    budget.spend(BLOCK_RETRY.toNanos());
  }

  /**
   * How to decide and emit the input record at {@code offset}: by the generation's replay ranges,
   * and as read-but-undecided when the tools copied it from an older generation's input (D35).
   */
  private Replay.Range rangeOf(long offset, Headers headers) {
    Replay.Range range = settings.rangeOf(context.taskId().partition(), offset);
    if (range == Replay.Range.LIVE
        && settings.readsCopies()
        && headers.lastHeader(Replay.UNDECIDED_HEADER) != null) {
      return Replay.Range.UNCLAIMED;
    }
    return range;
  }

  private void act(PendingEvent event, RunState.Head current, Outcome outcome, Replay.Range range) {
    if (range == Replay.Range.SILENT || range == Replay.Range.MARKED) {
      metrics.replayed(range == Replay.Range.MARKED);
    }
    switch (outcome) {
      case APPLY -> apply(event, current, range);
      case STALE -> stale(event, current, range);
      case REUSED -> reused(event, range);
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

  private RunState.Head storedHead(String runId) {
    byte[] stored = runs.get(runId);
    return stored == null ? null : RunStateJson.readHead(stored);
  }

  private void apply(PendingEvent event, RunState.Head current, Replay.Range range) {
    RunState next =
        RunState.apply(
            current,
            event.runId(),
            event.requestId(),
            event.createdAt(),
            event.type(),
            Instant.ofEpochMilli(event.timestamp()),
            null); // the data goes from the body into the JSON as it is (D32)
    byte[] json = RunStateJson.withDataOf(next, event.raw());
    runs.put(event.runId(), json);
    heads.applied(event.runId(), next.head());
    if (!range.emits()) {
      return; // an earlier generation emitted it, and sume.runs holds this state already
    }
    context.forward(
        new Record<>(event.runId(), event.raw(), event.timestamp(), output(event.headers(), range)),
        ProcessorTopology.EVENTS_SINK);
    context.forward(
        new Record<>(event.runId(), json, event.timestamp(), output(null, range)),
        ProcessorTopology.RUNS_SINK);
    if (range != Replay.Range.MARKED) {
      metrics.applied(event.headers());
    }
  }

  /**
   * The headers of an output record: a copy of {@code headers} (or none), with the replay's id when
   * a reprocess emits it again, so consumers can tell it from the first time (D35).
   */
  private Headers output(Headers headers, Replay.Range range) {
    Headers out =
        headers == null
            ? new org.apache.kafka.common.header.internals.RecordHeaders()
            : copy(headers);
    if (range == Replay.Range.MARKED) {
      RecordHeaders.put(out, Replay.HEADER, settings.replay().id());
    }
    return out;
  }

  private void stale(PendingEvent event, RunState.Head current, Replay.Range range) {
    if (!range.emits()) {
      return; // listed by the generation that decided it first
    }
    Headers headers = output(event.headers(), range);
    RecordHeaders.put(headers, "stale.last_request_id", current.lastRequestId());
    RecordHeaders.put(headers, "stale.last_created_at", current.lastCreatedAt().toString());
    context.forward(
        new Record<>(event.runId(), event.raw(), event.timestamp(), headers),
        ProcessorTopology.STALE_SINK);
    log.info(
        "stale request_id={} run_id={} created_at={} last_created_at={}",
        event.requestId(),
        event.runId(),
        event.createdAt(),
        current.lastCreatedAt());
  }

  /**
   * A copy of a request id that was taken first for another run: never applied to its own run, as a
   * request id names one event of one run, and dead-lettered so that nothing is lost (D41).
   */
  private void reused(PendingEvent event, Replay.Range range) {
    deadLetter(
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
    Replay.Range range = rangeOf(offset, event.headers());
    metrics.applyFailed(true);
    deadLetter(
        event,
        range,
        "apply_failed",
        failure.attempts() + " attempts failed; the last: " + failure.lastError());
    unpark(offset, event);
    failures.settled(owner, offset);
  }

  /** A decided event leaves the pending store, and with a window its run's parked count (D60). */
  private void unpark(long offset, PendingEvent event) {
    pending.delete(offset);
    if (parkedRuns != null) {
      parkedRuns.decided(event.runId());
    }
  }

  private void deadLetter(PendingEvent event, Replay.Range range, String reason, String detail) {
    deadLetter(
        new Record<>(event.runId(), event.raw(), event.timestamp(), event.headers()),
        event.requestId(),
        range,
        reason,
        detail);
  }

  private void toDeadLetters(
      Record<String, byte[]> record, long offset, String reason, String detail) {
    String requestId = RecordHeaders.get(record.headers(), RecordHeaders.REQUEST_ID);
    if (deadLetter(record, requestId, rangeOf(offset, record.headers()), reason, detail)) {
      metrics.invalid();
    } else {
      metrics.replayed(false);
    }
  }

  /**
   * Writes {@code record} to the DLQ with its reason and detail.
   *
   * @return false, writing nothing, when the generation that read it first dead-lettered it (D35)
   */
  private boolean deadLetter(
      Record<String, byte[]> record,
      String requestId,
      Replay.Range range,
      String reason,
      String detail) {
    if (!range.emits()) {
      return false;
    }
    Headers headers = output(record.headers(), range);
    RecordHeaders.put(headers, RecordHeaders.DLQ_REASON, reason);
    RecordHeaders.put(headers, RecordHeaders.DLQ_DETAIL, detail);
    context.forward(record.withHeaders(headers), ProcessorTopology.DLQ_SINK);
    log.warn(
        "dead-lettered request_id={} run_id={} reason={}: {}",
        requestId,
        record.key(),
        reason,
        detail);
    return true;
  }

  /**
   * A body over PROCESSOR_MAX_BODY_BYTES cannot be copied into our outputs without exceeding their
   * size limits, and retrying could never fix it: dead-letter a reference to the original, which
   * stays in the input topic, instead of the bytes.
   */
  private void tooLarge(Record<String, byte[]> record) {
    var metadata = context.recordMetadata().orElseThrow();
    Replay.Range range = rangeOf(metadata.offset(), record.headers());
    if (!range.emits()) {
      metrics.replayed(false);
      return;
    }
    int bodyBytes = record.value() == null ? 0 : record.value().length;
    int headerBytes = headerBytes(record.headers());
    boolean headersFit = headerBytes <= MAX_HEADER_BYTES;
    Headers headers = output(headersFit ? record.headers() : null, range);
    String where = metadata.topic() + "-" + metadata.partition() + "@" + metadata.offset();
    RecordHeaders.put(headers, RecordHeaders.DLQ_REASON, "too_large");
    RecordHeaders.put(
        headers,
        RecordHeaders.DLQ_SOURCE,
        metadata.topic() + "/" + metadata.partition() + "/" + metadata.offset());
    RecordHeaders.put(
        headers,
        RecordHeaders.DLQ_DETAIL,
        (headersFit
                ? bodyBytes + " bytes > PROCESSOR_MAX_BODY_BYTES=" + settings.maxBodyBytes()
                : headerBytes + " bytes of headers > " + MAX_HEADER_BYTES + " (not copied)")
            + "; the record stays at "
            + where);
    metrics.invalid();
    context.forward(
        new Record<String, byte[]>(record.key(), null, record.timestamp(), headers),
        ProcessorTopology.DLQ_SINK);
    log.warn(
        "dead-lettered a reference to a record of {} body and {} header bytes at {} (over the"
            + " limits)",
        bodyBytes,
        headerBytes,
        where);
  }

  private static int headerBytes(Headers headers) {
    int bytes = 0;
    for (org.apache.kafka.common.header.Header h : headers) {
      bytes += h.key().length() + (h.value() == null ? 0 : h.value().length);
    }
    return bytes;
  }

  /**
   * Writes the waiting done markers on their own (nothing to claim since, or the task closes). If
   * Redis does not answer they keep waiting; at most a batch's worth, as no claim is held
   * meanwhile.
   */
  private void flushDone() {
    List<Marker> markers = roundTrip.owed(owner);
    if (writeMarkers(markers)) {
      roundTrip.wrote(owner, markers);
      faultHook.afterMarkDone(markers.stream().map(Marker::requestId).toList());
    }
  }

  private boolean writeMarkers(List<Marker> markers) {
    long start = System.nanoTime();
    try {
      dedup.markDone(owner, markers);
      return true;
    } catch (DedupUnavailableException e) {
      log.debug("done markers not written yet: {}", e.getMessage());
      return false;
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }

  /**
   * Writes the last batch's done markers. On a clean close (revocation, shutdown) Streams has
   * committed them already. On a dirty close the transaction aborts, and a done of this task is
   * then the case the decision table is built for (design.md §6.2): not trusted for a newer event.
   * Left unwritten, the claims would expire after the claim TTL, and a late copy of an applied id
   * would read as stale instead of duplicate.
   */
  @Override
  public void close() {
    heads = null; // a closed task's heads may be of a transaction that aborts
    if (roundTrip == null) {
      return;
    }
    ThreadRoundTrip.Left left = roundTrip.leave(owner);
    release(left.unused());
    if (left.owed().isEmpty()) {
      return;
    }
    try {
      if (!writeMarkers(left.owed())) {
        log.warn("{} done markers not written at close: Redis did not answer", left.owed().size());
      }
    } catch (RuntimeException e) {
      log.warn("done markers not written at close (claims expire after the TTL): {}", e.toString());
    }
  }

  /** Gives back claims this task took and did not decide, so that a retry can take them. */
  private void release(List<EventKey> events) {
    if (events.isEmpty() || !dedup.enabled() || !budget.allows()) {
      return; // unreleased, they expire after the claim TTL
    }
    long start = System.nanoTime();
    try {
      dedup.release(owner, events);
    } catch (RuntimeException e) {
      log.warn("claims not released (they expire after the claim TTL): {}", e.toString());
    } finally {
      budget.spend(System.nanoTime() - start);
    }
  }

  private static Headers copy(Headers headers) {
    return new org.apache.kafka.common.header.internals.RecordHeaders(
        Objects.requireNonNull(headers).toArray());
  }
}
