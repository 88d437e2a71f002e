package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.LongStream;

/**
 * The records in the output topics (events, stale, DLQ) that no audited decision has taken yet,
 * counted by run, request id and replay, each taken once; with the sink, the events topic's records
 * by where they are too (D94). Read on from where the last read stopped, so that a continuous audit
 * reads each record once (D89).
 */
final class LedgerOutputs {
  private final Map<String, Object> clientSettings;
  private final TopicNames topics;
  private final Map<String, Map<String, Integer>> byTopic = new HashMap<>();
  private final Map<String, Map<Integer, Long>> positions = new HashMap<>();

  /**
   * The events topic's records' places by key (packed; nearly always one), when the sink is
   * checked, else null.
   */
  private final Map<String, long[]> eventsAt;

  private long taken = -1;

  LedgerOutputs(Map<String, Object> clientSettings, TopicNames topics, boolean where) {
    this.clientSettings = clientSettings;
    this.topics = topics;
    this.eventsAt = where ? new HashMap<>() : null;
    for (String topic : topics()) {
      byTopic.put(topic, new HashMap<>());
      positions.put(topic, new TreeMap<>());
    }
  }

  /** The topics read: events, stale, DLQ. */
  List<String> topics() {
    return List.of(topics.events(), topics.stale(), topics.dlq());
  }

  /**
   * Reads what the output topics gained since the last read, up to {@code ends}: each topic's end
   * offsets by partition, taken once the committed offsets were read (a grow can add partitions).
   */
  void readOn(Map<String, Map<Integer, Long>> ends) {
    for (Map.Entry<String, Map<Integer, Long>> e : positions.entrySet()) {
      Map<Integer, Long> end = ends.getOrDefault(e.getKey(), Map.of());
      for (int p : end.keySet()) {
        e.getValue().putIfAbsent(p, 0L);
      }
      if (e.getValue().isEmpty()) {
        continue;
      }
      Map<Integer, Long> stopped =
          TopicScan.read(
              clientSettings,
              e.getKey(),
              e.getValue(),
              end,
              r ->
                  add(
                      e.getKey(),
                      r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8),
                      RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID),
                      RecordHeaders.get(r.headers(), Replay.HEADER),
                      r.partition(),
                      r.offset()),
              n -> {});
      e.getValue().putAll(stopped);
    }
  }

  /** One output record, read from {@code topic} at {@code partition}/{@code offset}. */
  void add(String topic, String run, String requestId, String replay, int partition, long offset) {
    String k = key(run, requestId, replay);
    byTopic.get(topic).merge(k, 1, Integer::sum);
    if (eventsAt != null && topic.equals(topics.events())) {
      long at = pack(partition, offset);
      eventsAt.merge(
          k,
          new long[] {at},
          (a, b) -> LongStream.concat(Arrays.stream(a), Arrays.stream(b)).toArray());
    }
  }

  /** A partition and offset in one long: 16 bits of partition, 47 of offset. */
  static long pack(int partition, long offset) {
    return ((long) partition << 47) | offset;
  }

  static int partition(long packed) {
    return (int) (packed >>> 47);
  }

  static long offset(long packed) {
    return packed & ((1L << 47) - 1);
  }

  /** Whether the last {@link #take} took a record of the events topic whose place is known. */
  boolean tookEvent() {
    return taken >= 0;
  }

  /** Where the events topic's record the last {@link #take} took is, packed. */
  long takenAt() {
    return taken;
  }

  private static String key(String run, String requestId, String replay) {
    return run + "\u0000" + requestId + "\u0000" + replay;
  }

  /** Takes the record {@code d} wrote; why it is missing, or null. */
  String take(Decision d) {
    taken = -1;
    if (d.output() == null || d.outcome() == Decision.Outcome.RE_DERIVED) {
      return null;
    }
    String topic =
        switch (d.outcome()) {
          case APPLIED, RELEASED -> topics.events();
          case STALE -> topics.stale();
          case REUSED, DEAD_LETTERED, INVALID -> topics.dlq();
          default -> null;
        };
    if (topic == null) {
      return null;
    }
    Map<String, Integer> counts = byTopic.get(topic);
    String k = key(d.runId(), d.requestId(), d.replay());
    Integer n = counts.get(k);
    if (n == null || n == 0) {
      return d.outcome().tag() + ", and its record is not in " + topic;
    }
    if (n == 1) {
      counts.remove(k);
    } else {
      counts.put(k, n - 1);
    }
    if (eventsAt != null && topic.equals(topics.events())) {
      long[] at = eventsAt.remove(k);
      taken = at[at.length - 1];
      if (at.length > 1) {
        eventsAt.put(k, Arrays.copyOf(at, at.length - 1));
      }
    }
    return null;
  }
}
