package dev.runlane.processor.topology;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.ClaimRequest;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupDecision;
import dev.runlane.processor.dedup.DedupUnavailableException;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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
 * the batch before ride on its claims (DESIGN §6, D22), and the round trip also carries the claims
 * and markers of the other tasks on the stream thread, which then decide on its answers without a
 * trip of their own (D25).
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

  private final TopologySettings settings;
  private final EnvelopeParser parser;
  private final Dedup dedup;
  private final ProcessorMetrics metrics;
  private final FaultHook faultHook;
  private final ThreadTasks threadTasks;

  private ProcessorContext<String, byte[]> context;
  private KeyValueStore<Long, PendingEvent> pending;
  private KeyValueStore<String, byte[]> runs;
  private RunHeads heads;
  private String owner;
  private int parkedSinceDrain;

  /**
   * Ids decided by the last batch, marked done ahead of the next batch's claims, so that a batch
   * costs one round trip instead of two: at a live rate a batch holds a few events (D22). Until a
   * marker lands, its id holds this task's {@code processing} claim.
   */
  private final List<String> doneLater = new ArrayList<>();

  /**
   * Those of {@link #doneLater} decided stale: their markers say so, so that after an abort they
   * are decided, and listed, again (D40).
   */
  private final Set<String> staleLater = new HashSet<>();

  /** Ids parked since the last drain, which a peer's round trip may claim for this task. */
  private final Set<String> unclaimed = new LinkedHashSet<>();

  /** Claims a peer's round trip took for this task, used (or released) at its next drain. */
  private final Map<String, Claim> prefetched = new HashMap<>();

  /** When the oldest of {@link #prefetched} was taken, on the taking task's wall clock. */
  private long prefetchedAtMs;

  /** The processors on this task's stream thread, this one among them. */
  private ThreadTasks.Group peers;

  private long drains;

  /** The drain in which the oldest id in {@link #doneLater} was queued. */
  private long doneLaterDrain;

  RunEventProcessor(
      TopologySettings settings,
      EnvelopeParser parser,
      Dedup dedup,
      ProcessorMetrics metrics,
      FaultHook faultHook,
      ThreadTasks threadTasks) {
    this.settings = settings;
    this.parser = parser;
    this.dedup = dedup;
    this.metrics = metrics;
    this.faultHook = faultHook;
    this.threadTasks = threadTasks;
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
    // New with every init(): a head cached before the store was rolled back or restored would
    // decide against a state that no longer exists. Streams 4.4.0 rebuilt a corrupted task with a
    // new processor (ProcessorIT), but may call init() again on this one (read with javap, D33).
    this.heads = new RunHeads(CACHED_RUN_HEADS);
    // Stable across restarts and failover; a zombie with the same task id is fenced (DESIGN §6).
    // The task id alone: DEDUP_KEY_PREFIX already separates deployments, and every byte of the
    // value is paid once per key for the done TTL (D15).
    // A later generation's prefix names it in every marker, so that its tasks never read an older
    // generation's marker as their own (D35).
    this.owner = settings.ownerPrefix() + context.taskId().toString();
    this.peers = threadTasks.join(this);
    scheduleDrains();
  }

  /**
   * Every task of the thread drains on one grid of batch intervals, so that they drain in the same
   * pass and the first round trip of the pass carries the claims of all of them (D25).
   */
  private void scheduleDrains() {
    long first =
        peers.nextDrain(context.currentSystemTimeMs(), settings.batchInterval().toMillis());
    context.schedule(
        Instant.ofEpochMilli(first),
        settings.batchInterval(),
        PunctuationType.WALL_CLOCK_TIME,
        now -> drain());
  }

  @Override
  public void process(Record<String, byte[]> record) {
    metrics.read(record.headers());
    if (record.value() != null && record.value().length > settings.maxBodyBytes()) {
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
      toDeadLetters(record, offset, "key_mismatch", "record key is not the envelope's run id");
      return;
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
      unclaimed.add(envelope.requestId());
    }
    if (++parkedSinceDrain >= settings.batchSize()) {
      drain();
    }
  }

  /** Decides every parked event, oldest offset first, in batches of at most the batch size. */
  private void drain() {
    parkedSinceDrain = 0;
    drains++;
    if (!prefetched.isEmpty()
        && context.currentSystemTimeMs() - prefetchedAtMs > settings.batchInterval().toMillis()) {
      // Taken over a batch interval before this drain (a late drain): ask again rather than lean
      // on their TTL. Claims this task still holds read back as its own; one behind a waiting
      // event is held until a later drain reads it back so, or its TTL ends.
      prefetched.clear();
    }
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
      decideBatch(parked.subList(from, Math.min(parked.size(), from + max)), waitingRuns);
    }
    // Claims a peer took for events whose run waits: give them back, as for a batch's own.
    releasePrefetched();
    // A marker waits for one drain at most: with nothing to claim since, it goes alone.
    if (!doneLater.isEmpty() && doneLaterDrain < drains) {
      List<String> written = flushDone();
      if (!written.isEmpty()) {
        faultHook.afterMarkDone(written);
      }
    }
  }

  private void decideBatch(List<KeyValue<Long, PendingEvent>> batch, Set<String> waitingRuns) {
    Set<String> requestIds = new LinkedHashSet<>();
    for (KeyValue<Long, PendingEvent> kv : batch) {
      if (!waitingRuns.contains(kv.value.runId())
          && !rangeOf(kv.key, kv.value.headers()).storeAlone()) {
        requestIds.add(kv.value.requestId());
      }
    }
    for (KeyValue<Long, PendingEvent> kv : batch) {
      unclaimed.remove(kv.value.requestId()); // claimed below, or released as its run waits
    }
    Map<String, Claim> claims = new HashMap<>(requestIds.size() * 2);
    List<String> doneFirst = List.of();
    List<String> toMarkDone = new ArrayList<>();
    Set<String> toMarkStale = new HashSet<>();
    List<String> toRelease = new ArrayList<>();
    Set<String> decided = new HashSet<>();
    Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
    int degraded = 0; // decided without Redis's answer
    try {
      List<String> toAsk = new ArrayList<>();
      for (String id : requestIds) {
        Claim claim = prefetched.remove(id);
        if (claim != null) {
          claims.put(id, claim);
        } else {
          toAsk.add(id);
        }
      }
      if (!toAsk.isEmpty()) {
        List<String> markers = List.copyOf(doneLater);
        if (claimWithPeers(toAsk, markers, Set.copyOf(staleLater), claims)) {
          doneLater.clear();
          staleLater.clear();
          doneFirst = markers;
        } // else the markers wait for Redis to answer again
      }
      if (!doneFirst.isEmpty()) {
        faultHook.afterMarkDone(doneFirst);
      }
      for (KeyValue<Long, PendingEvent> kv : batch) {
        PendingEvent event = kv.value;
        if (waitingRuns.contains(event.runId())) {
          // Keep the run's arrival order behind an event that waits; give back its claim.
          // (No claim at all if the run was already waiting when the batch was claimed.)
          Claim skipped = claims.get(event.requestId());
          if (skipped != null && skipped.releasable()) {
            toRelease.add(event.requestId());
          }
          continue;
        }
        Replay.Range range = rangeOf(kv.key, event.headers());
        Claim claim = range.storeAlone() ? Claim.REPLAY : claims.get(event.requestId());
        if (claim != Claim.UNAVAILABLE
            && claim != Claim.REPLAY
            && !decided.add(event.requestId())) {
          claim = Claim.EARLIER_IN_BATCH;
        }
        RunState.Head current = heads.get(event.runId(), this::storedHead);
        Outcome outcome =
            DedupDecision.decide(
                claim, RunState.order(current, event.createdAt(), event.requestId()));
        if (outcome == Outcome.WAIT) {
          waitingRuns.add(event.runId());
          decided.remove(event.requestId());
          continue;
        }
        act(event, current, outcome, range);
        pending.delete(kv.key);
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
          toMarkDone.add(event.requestId());
          if (outcome == Outcome.STALE) {
            toMarkStale.add(event.requestId());
          } else {
            toMarkStale.remove(event.requestId());
          }
        }
      }
      toRelease.removeAll(toMarkDone); // an earlier copy of the id was decided in this batch
      release(toRelease);
    } catch (RuntimeException e) {
      release(claims);
      throw e;
    }
    if (!toMarkDone.isEmpty()) {
      if (doneLater.isEmpty()) {
        doneLaterDrain = drains;
      }
      doneLater.addAll(toMarkDone);
      toMarkDone.forEach(staleLater::remove); // decided again: the latest outcome counts
      staleLater.addAll(toMarkStale);
    }
    counts.forEach(metrics::outcome);
    if (degraded > 0 && dedup.enabled()) {
      metrics.degraded(degraded);
    }
    metrics.batch(batch.size());
  }

  /**
   * Claims this batch's ids into {@code claims}, led by this task's waiting done markers, in one
   * round trip that also carries what the thread's other tasks have parked since their last drain
   * and the markers they owe (D25). They decide those events at their own next drain, without a
   * trip of their own.
   *
   * @return whether Redis answered; if not, every id is {@code UNAVAILABLE}
   */
  private boolean claimWithPeers(
      List<String> requestIds,
      List<String> doneFirst,
      Set<String> staleFirst,
      Map<String, Claim> claims) {
    if (!dedup.enabled()) {
      requestIds.forEach(id -> claims.put(id, Claim.UNAVAILABLE));
      return false;
    }
    List<ClaimRequest> requests = new ArrayList<>();
    requests.add(new ClaimRequest(owner, doneFirst, staleFirst, requestIds));
    List<RunEventProcessor> riders = new ArrayList<>();
    for (RunEventProcessor peer : peers.members) {
      if (peer != this && (!peer.unclaimed.isEmpty() || !peer.doneLater.isEmpty())) {
        riders.add(peer);
        requests.add(
            new ClaimRequest(
                peer.owner,
                List.copyOf(peer.doneLater),
                Set.copyOf(peer.staleLater),
                List.copyOf(peer.unclaimed)));
      }
    }
    List<Map<String, Claim>> answers = claim(requests);
    if (answers == null) {
      requestIds.forEach(id -> claims.put(id, Claim.UNAVAILABLE));
      return false;
    }
    claims.putAll(answers.get(0)); // in the caller's hands before a hook can throw
    // This task's clock: Streams refreshed it for this punctuation or processing loop; a rider's
    // may date from its last record.
    long takenAtMs = context.currentSystemTimeMs();
    for (int i = 0; i < riders.size(); i++) {
      riders.get(i).rodeAlong(requests.get(i + 1), answers.get(i + 1), takenAtMs);
    }
    // Once every rider has its claims in hand: a hook that throws must not strand the others'.
    for (int i = 1; i < requests.size(); i++) {
      if (!requests.get(i).doneFirst().isEmpty()) {
        faultHook.afterMarkDone(requests.get(i).doneFirst());
      }
    }
    return true;
  }

  /**
   * Takes in what a peer's round trip did for this task: claims to decide with, markers written.
   */
  private void rodeAlong(ClaimRequest request, Map<String, Claim> claims, long takenAtMs) {
    if (prefetched.isEmpty()) {
      prefetchedAtMs = takenAtMs;
    }
    prefetched.putAll(claims);
    unclaimed.removeAll(request.requestIds());
    doneLater.removeAll(request.doneFirst());
    staleLater.removeAll(request.doneFirst());
  }

  /**
   * One claim round trip, or null when Redis does not answer in degrade mode. In block mode it
   * retries until the block timeout, then fails the thread.
   */
  private List<Map<String, Claim>> claim(List<ClaimRequest> requests) {
    long deadline = System.nanoTime() + settings.redisBlockTimeout().toNanos();
    while (true) {
      try {
        return dedup.claim(requests);
      } catch (DedupUnavailableException e) {
        if (settings.redisFailureMode() == RedisFailureMode.DEGRADE) {
          return null;
        }
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "redis unavailable for longer than REDIS_BLOCK_TIMEOUT_SECONDS in block mode", e);
        }
        parkOneBackoff();
      }
    }
  }

  private static void parkOneBackoff() {
    java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
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

  private void toDeadLetters(
      Record<String, byte[]> record, long offset, String reason, String detail) {
    Replay.Range range = rangeOf(offset, record.headers());
    if (!range.emits()) {
      metrics.replayed(false);
      return; // dead-lettered by the generation that read it first
    }
    metrics.invalid();
    Headers headers = output(record.headers(), range);
    RecordHeaders.put(headers, RecordHeaders.DLQ_REASON, reason);
    RecordHeaders.put(headers, RecordHeaders.DLQ_DETAIL, detail);
    context.forward(record.withHeaders(headers), ProcessorTopology.DLQ_SINK);
    log.warn(
        "dead-lettered record key={} request_id={} reason={}",
        record.key(),
        RecordHeaders.get(record.headers(), RecordHeaders.REQUEST_ID),
        reason);
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
    Headers headers = output(record.headers(), range);
    RecordHeaders.put(headers, RecordHeaders.DLQ_REASON, "too_large");
    RecordHeaders.put(
        headers,
        RecordHeaders.DLQ_SOURCE,
        metadata.topic() + "/" + metadata.partition() + "/" + metadata.offset());
    RecordHeaders.put(
        headers,
        RecordHeaders.DLQ_DETAIL,
        record.value().length
            + " bytes > PROCESSOR_MAX_BODY_BYTES="
            + settings.maxBodyBytes()
            + "; the body stays at "
            + metadata.topic()
            + "-"
            + metadata.partition()
            + "@"
            + metadata.offset());
    metrics.invalid();
    context.forward(
        new Record<String, byte[]>(record.key(), null, record.timestamp(), headers),
        ProcessorTopology.DLQ_SINK);
    log.warn(
        "dead-lettered a reference to a {}-byte record at {}-{}@{} (over the body limit)",
        record.value().length,
        metadata.topic(),
        metadata.partition(),
        metadata.offset());
  }

  /**
   * Writes the waiting done markers on their own (nothing to claim since, or the task closes). If
   * Redis does not answer they keep waiting; at most a batch's worth, as no claim is held
   * meanwhile.
   *
   * @return the ids written, empty if none
   */
  private List<String> flushDone() {
    List<String> ids = List.copyOf(doneLater);
    try {
      dedup.markDone(ids, Set.copyOf(staleLater), owner);
    } catch (DedupUnavailableException e) {
      log.debug("done markers not written yet: {}", e.getMessage());
      return List.of();
    }
    doneLater.clear();
    staleLater.clear();
    return ids;
  }

  /**
   * Writes the last batch's done markers. On a clean close (revocation, shutdown) Streams has
   * committed them already. On a dirty close the transaction aborts, and a done of this task is
   * then the case DESIGN §6 built the table for: not trusted for a newer event. Left unwritten, the
   * claims would expire after the claim TTL, and a late copy of an applied id would read as stale
   * instead of duplicate.
   */
  @Override
  public void close() {
    if (peers != null) {
      peers.members.remove(this);
    }
    unclaimed.clear();
    heads = null; // a closed task's heads may be of a transaction that aborts
    releasePrefetched();
    if (doneLater.isEmpty()) {
      return;
    }
    try {
      if (flushDone().isEmpty()) {
        log.warn("{} done markers not written at close: Redis did not answer", doneLater.size());
      }
    } catch (RuntimeException e) {
      log.warn("done markers not written at close (claims expire after the TTL): {}", e.toString());
    }
  }

  /** Gives back the claims a peer took for this task that no drain used. */
  private void releasePrefetched() {
    if (!prefetched.isEmpty()) {
      release(prefetched);
      prefetched.clear();
    }
  }

  /** On a failure: give back every claim of the batch that this task took and did not finish. */
  private void release(Map<String, Claim> claims) {
    List<String> ours = new ArrayList<>();
    claims.forEach(
        (id, claim) -> {
          if (claim.releasable()) {
            ours.add(id);
          }
        });
    release(ours);
  }

  private void release(List<String> requestIds) {
    if (requestIds.isEmpty() || !dedup.enabled()) {
      return;
    }
    try {
      dedup.release(requestIds, owner);
    } catch (RuntimeException e) {
      log.warn("claims not released (they expire after the claim TTL): {}", e.toString());
    }
  }

  private static Headers copy(Headers headers) {
    return new org.apache.kafka.common.header.internals.RecordHeaders(
        Objects.requireNonNull(headers).toArray());
  }
}
