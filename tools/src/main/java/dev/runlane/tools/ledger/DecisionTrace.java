package dev.runlane.tools.ledger;

import dev.runlane.common.decision.Decision;
import dev.runlane.common.decision.DecisionLogSettings;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.sink.SinkConfig;
import dev.runlane.tools.BadUsage;
import dev.runlane.tools.Refused;
import dev.runlane.tools.generation.Pipeline;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * {@code runlane trace}: the story of a run or a request id (D87). With a run, one partition of the
 * decision log (the run is its key) and the run's partition of the input past the committed offset
 * (received, not decided yet); with only a request id, every partition, with progress. Then the
 * run's state now ({@code /runs/{id}}) and each request id's Redis marker now; with the sink
 * configured, each request id's row in its database and its position on the run's partition (D94).
 */
public final class DecisionTrace {
  /** How long a trace asks {@code /runs} again while it answers 503. */
  static final Duration RUN_NOW_PATIENCE = Duration.ofSeconds(15);

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** An input record received and not decided yet: past its partition's committed offset. */
  public record Undecided(String input, String runId, String requestId, Long receivedAt) {}

  /** What {@code GET /runs/{id}} answers now, or why it could not. */
  public record RunNow(int status, String body) {}

  /** The story, ready to print. */
  public record Result(
      String runId,
      String requestId,
      String logTopic,
      List<Decision> decisions,
      List<Undecided> undecided,
      Map<String, RunNow> runs,
      Map<String, String> markers,
      SinkRows.Now sink,
      long scanned) {}

  private final Pipeline pipeline;
  private final DecisionLogSettings log;
  private final RedisMarker redis;
  private final SinkConfig sink;
  private final URI processor;
  private final PrintStream progress;

  public DecisionTrace(
      Pipeline pipeline,
      DecisionLogSettings log,
      RedisMarker redis,
      SinkConfig sink,
      URI processor,
      PrintStream progress) {
    this.pipeline = pipeline;
    this.log = log;
    this.redis = redis;
    this.sink = sink;
    this.processor = processor;
    this.progress = progress;
  }

  /** The story of {@code runId} and/or {@code requestId} since {@code since} (null: all kept). */
  public Result trace(String runId, String requestId, Instant since) {
    if (runId == null && requestId == null) {
      throw new BadUsage("give --run, --request-id, or both");
    }
    int partitions =
        pipeline
            .cluster()
            .partitions(log.topic())
            .orElseThrow(
                () ->
                    new Refused(
                        "the decision log "
                            + log.topic()
                            + " does not exist: the processors run with DECISION_LOG=off, or"
                            + " TOPIC_DECISIONS names another topic"));
    long[] scanned = {0};
    List<Decision> decisions = new ArrayList<>();
    Map<Integer, Long> from = from(partitions, runId, requestId, since);
    TopicScan.read(
        pipeline.clientSettings(),
        log.topic(),
        from,
        Map.of(),
        r -> {
          scanned[0]++;
          Decision d = matching(r, runId, requestId);
          if (d != null) {
            decisions.add(d);
          }
        },
        n -> progress.printf("  ... %,d records read, %d decisions found%n", n, decisions.size()));
    Set<String> runs = new LinkedHashSet<>();
    if (runId != null) {
      runs.add(runId);
    }
    decisions.forEach(d -> runs.add(d.runId()));
    runs.remove(null);
    List<Undecided> undecided = undecided(runs, requestId);
    undecided.forEach(u -> runs.add(u.runId()));
    Set<String> ids = new LinkedHashSet<>();
    decisions.forEach(d -> ids.add(d.requestId()));
    undecided.forEach(u -> ids.add(u.requestId()));
    if (requestId != null) {
      ids.add(requestId);
    }
    ids.remove(null);
    Map<String, String> markers = new LinkedHashMap<>();
    ids.forEach(id -> markers.put(id, redis.now(id)));
    Map<String, RunNow> states = new LinkedHashMap<>();
    runs.forEach(r -> states.put(r, runNow(r)));
    return new Result(
        runId,
        requestId,
        log.topic(),
        decisions,
        undecided,
        states,
        markers,
        sinkNow(ids, runs),
        scanned[0]);
  }

  /**
   * Each request id's row in the sink's database and the sink's position on the runs' partitions of
   * the events topic (the run is its key), or null without the sink configured (D94).
   */
  private SinkRows.Now sinkNow(Set<String> ids, Set<String> runs) {
    if (sink == null) {
      return null;
    }
    int partitions = pipeline.cluster().partitions(sink.topic()).orElse(0);
    Set<Integer> of = new TreeSet<>();
    if (partitions > 0) {
      runs.forEach(run -> of.add(TopicScan.partitionOf(run, partitions)));
    }
    return SinkRows.now(sink, ids, of);
  }

  /** Where to read from in each partition to read: the run's alone, or every one. */
  private Map<Integer, Long> from(int partitions, String runId, String requestId, Instant since) {
    Map<Integer, Long> start =
        since == null
            ? pipeline.cluster().startOffsets(log.topic(), partitions)
            : pipeline.cluster().offsetsAt(log.topic(), partitions, since);
    if (runId != null) {
      int p = TopicScan.partitionOf(runId, partitions);
      progress.printf(
          "reading partition %d of %s (the run's key)%s%n",
          p, log.topic(), since == null ? "" : " from " + since);
      return Map.of(p, start.get(p));
    }
    long total = 0;
    Map<Integer, Long> end = pipeline.cluster().endOffsets(log.topic(), partitions);
    for (Map.Entry<Integer, Long> e : end.entrySet()) {
      total += e.getValue() - start.get(e.getKey());
    }
    progress.printf(
        "searching every partition of %s (%d partitions, %,d offsets%s) for request_id %s:"
            + " a request id is not the log's key; give --run to read one partition%n",
        log.topic(), partitions, total, since == null ? "" : " since " + since, requestId);
    return new TreeMap<>(start);
  }

  private static Decision matching(
      ConsumerRecord<byte[], byte[]> r, String runId, String requestId) {
    if (runId != null
        && (r.key() == null || !runId.equals(new String(r.key(), StandardCharsets.UTF_8)))) {
      return null;
    }
    if (r.value() == null) {
      return null;
    }
    Decision d = Decision.parse(r.value());
    return requestId == null || requestId.equals(d.requestId()) ? d : null;
  }

  /**
   * The input records of {@code runs} (or of {@code requestId} in every partition, when no run is
   * known) past the committed offset of the generation that runs: received, not decided yet.
   */
  private List<Undecided> undecided(Set<String> runs, String requestId) {
    Generation g = pipeline.latest();
    int partitions = pipeline.cluster().partitions(g.input()).orElse(0);
    if (partitions == 0) {
      return List.of();
    }
    Map<Integer, Long> committed = pipeline.cluster().committed(g.applicationId(), g.input());
    Map<Integer, Long> starts = pipeline.cluster().startOffsets(g.input(), partitions);
    Map<Integer, Long> from = new HashMap<>();
    if (runs.isEmpty()) {
      starts.forEach((p, s) -> from.put(p, Math.max(s, committed.getOrDefault(p, s))));
    } else {
      for (String run : runs) {
        int p = TopicScan.partitionOf(run, partitions);
        from.put(p, Math.max(starts.get(p), committed.getOrDefault(p, starts.get(p))));
      }
    }
    List<Undecided> out = new ArrayList<>();
    TopicScan.read(
        pipeline.clientSettings(),
        g.input(),
        from,
        Map.of(),
        r -> {
          String run = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
          String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
          if ((runs.isEmpty() || runs.contains(run))
              && (requestId == null || requestId.equals(id))) {
            String at = RecordHeaders.get(r.headers(), RecordHeaders.RECEIVED_AT);
            out.add(
                new Undecided(
                    r.topic() + "/" + r.partition() + "/" + r.offset(),
                    run,
                    id,
                    at == null ? null : Long.valueOf(at)));
          }
        },
        n -> {});
    return out;
  }

  /**
   * {@code GET /runs/{id}}; a 503 (a store restoring, a replay re-deriving) is asked again after
   * its {@code Retry-After}, for up to {@link #RUN_NOW_PATIENCE}, as the answer then is "later".
   */
  private RunNow runNow(String runId) {
    long deadline = System.nanoTime() + RUN_NOW_PATIENCE.toNanos();
    try {
      while (true) {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(processor.resolve("/runs/" + runId))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 503 || System.nanoTime() - deadline > 0) {
          return new RunNow(r.statusCode(), r.body());
        }
        long wait = r.headers().firstValueAsLong("Retry-After").orElse(1);
        Thread.sleep(Duration.ofSeconds(Math.min(Math.max(wait, 1), 2)).toMillis());
      }
    } catch (IOException e) {
      return new RunNow(0, "unknown (" + processor + " did not answer: " + e + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new RunNow(0, "unknown (interrupted)");
    }
  }
}
