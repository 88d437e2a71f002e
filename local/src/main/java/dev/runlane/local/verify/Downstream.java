package dev.runlane.local.verify;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the pipeline wrote, as read from its topics: the applied events, the stale ones, each run's
 * state and, for the reorder window's check, when each input record can have been decided.
 *
 * <p>Filled one record at a time by {@link DownstreamReader}; read by the checks through read-only
 * views.
 */
final class Downstream {

  /** One record of the stale stream: its delivery's timestamp, and what it was stale against. */
  record StaleRecord(String requestId, long timestamp, String against) {}

  private final Map<String, Integer> applied = new HashMap<>();
  private final Map<String, List<String>> appliedOrder = new HashMap<>();
  private final Set<String> stale = new HashSet<>();

  /** Stale request id -> the run's last applied request id when it was judged stale. */
  private final Map<String, String> staleAgainst = new HashMap<>();

  /**
   * Each stale record: its request id, its timestamp (its delivery's), what it was stale against.
   */
  private final List<StaleRecord> staleRecords = new ArrayList<>();

  private final Map<String, JsonNode> runs = new HashMap<>();

  /** Applied request id -> its record timestamp: when the ingress received it (ms). */
  private final Map<String, Long> receivedAt = new HashMap<>();

  /**
   * Request id and record timestamp (one delivery) -> the earliest task time (ms) at which it can
   * have been decided: the later of its own timestamp and the latest timestamp before it in its
   * input partition. A record that reached the input late (a slow ack, a produce retried) carries
   * an old timestamp but is decided when its turn in the partition comes (D46).
   */
  private final Map<String, Long> decidedNoEarlier = new HashMap<>();

  /** Request id -> its input records, as partition@offset:timestamp (for failure details). */
  private final Map<String, List<String>> inputRecords = new HashMap<>();

  /** Input partition -> the latest record timestamp read so far. */
  private final Map<Integer, Long> inputTime = new HashMap<>();

  private long appliedRecords;
  private long replayed;

  /** An applied event emitted once more by a reprocess, marked: counted, not applied again. */
  void addReplayed() {
    replayed++;
  }

  /** A record of the input: where it sits in its partition decides when it can be decided. */
  void addInput(int partition, long offset, long timestamp, String requestId) {
    long before = inputTime.getOrDefault(partition, Long.MIN_VALUE);
    inputTime.put(partition, Math.max(before, timestamp));
    if (requestId != null) {
      decidedNoEarlier.merge(key(requestId, timestamp), Math.max(before, timestamp), Math::min);
      inputRecords
          .computeIfAbsent(requestId, k -> new ArrayList<>())
          .add(partition + "@" + offset + ":" + timestamp);
    }
  }

  /** A record of the applied stream ({@code sume.events}), keyed by its run. */
  void addApplied(String runId, String requestId, long timestamp) {
    appliedRecords++;
    if (requestId != null) {
      receivedAt.putIfAbsent(requestId, timestamp);
      applied.merge(requestId, 1, Integer::sum);
      appliedOrder.computeIfAbsent(runId, k -> new ArrayList<>()).add(requestId);
    }
  }

  /** A record of the stale stream, and the applied request id it was judged against, if named. */
  void addStale(String requestId, long timestamp, String against) {
    if (requestId == null) {
      return;
    }
    stale.add(requestId);
    if (against != null) {
      staleAgainst.put(requestId, against);
      staleRecords.add(new StaleRecord(requestId, timestamp, against));
    }
  }

  /** A run's state, as {@code sume.runs} holds it now. */
  void putRunState(String runId, JsonNode state) {
    runs.put(runId, state);
  }

  /** A run's tombstone in {@code sume.runs}. */
  void removeRun(String runId) {
    runs.remove(runId);
  }

  /** Whether every one of {@code requestIds} was applied or judged stale. */
  boolean holdsAll(Set<String> requestIds) {
    for (String id : requestIds) {
      if (!holds(id)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code requestId} was applied or judged stale. */
  boolean holds(String requestId) {
    return applied.containsKey(requestId) || stale.contains(requestId);
  }

  /** Whether {@code requestId} was applied. */
  boolean wasApplied(String requestId) {
    return applied.containsKey(requestId);
  }

  /** Applied request id -> how many times it was applied (read-only). */
  Map<String, Integer> applied() {
    return Collections.unmodifiableMap(applied);
  }

  /** How many records the applied stream holds, replays not counted. */
  long appliedRecords() {
    return appliedRecords;
  }

  /** Run id -> its applied request ids, in the order they were applied (read-only). */
  Map<String, List<String>> appliedOrder() {
    return Collections.unmodifiableMap(appliedOrder);
  }

  /** How many events of {@code runId} were applied. */
  int appliedCount(String runId) {
    return appliedOrder.getOrDefault(runId, List.of()).size();
  }

  /** The request ids judged stale (read-only). */
  Set<String> stale() {
    return Collections.unmodifiableSet(stale);
  }

  /** The applied request id {@code requestId} was judged stale against, or null. */
  String staleAgainst(String requestId) {
    return staleAgainst.get(requestId);
  }

  /** Each stale record that names what it was judged against, in the order read (read-only). */
  List<StaleRecord> staleRecords() {
    return Collections.unmodifiableList(staleRecords);
  }

  /** Run id -> its state in {@code sume.runs} (read-only). */
  Map<String, JsonNode> runs() {
    return Collections.unmodifiableMap(runs);
  }

  /** When the ingress received the applied {@code requestId} (ms), or null. */
  Long receivedAt(String requestId) {
    return receivedAt.get(requestId);
  }

  /**
   * The earliest task time (ms) at which the delivery of {@code requestId} with record timestamp
   * {@code timestamp} can have been decided, or null when the input was not read.
   */
  Long decidedNoEarlier(String requestId, long timestamp) {
    return decidedNoEarlier.get(key(requestId, timestamp));
  }

  /** The input records of {@code requestId}, as partition@offset:timestamp, or null. */
  List<String> inputRecords(String requestId) {
    List<String> records = inputRecords.get(requestId);
    return records == null ? null : Collections.unmodifiableList(records);
  }

  /** How many applied events a reprocess emitted again, marked. */
  long replayed() {
    return replayed;
  }

  private static String key(String requestId, long timestamp) {
    return requestId + "@" + timestamp;
  }
}
