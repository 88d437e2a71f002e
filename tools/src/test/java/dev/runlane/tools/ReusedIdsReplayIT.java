package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.generation.Replay;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.ProcessorMetrics;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/**
 * A request_id reused on two runs in different partitions is decided by a rebuild and a reprocess
 * as the live generation decided it (G2, G4; issue 36 item 1, D70): on the run that took it first,
 * dead-lettered on the other. Half the pairs are sent apart (the first copy applied before the
 * second is sent), half at once (live, whichever task claims first takes it).
 */
@RealInfra
class ReusedIdsReplayIT {
  private static final int PARTITIONS = 6;
  private static final int PAIRS = 24;
  private static final Instant T0 = Instant.parse("2026-12-07T09:00:00Z");

  /** Two runs on different partitions sharing one request id. */
  record Pair(String first, String second, String requestId) {}

  @Test
  void aRebuildAndAReprocessDecideAReusedIdAsTheLiveGenerationDid(Infra infra) throws Exception {
    try (Deployment d =
        new Deployment(infra, "reused", PARTITIONS, 2).startIngress().startProcessors()) {
      Instant from = Instant.now();
      List<Pair> pairs = pairs();
      List<String> runs = new ArrayList<>();
      for (Pair p : pairs) {
        runs.add(p.first());
        runs.add(p.second());
        d.post(p.first(), p.first() + "-own", T0);
        d.post(p.second(), p.second() + "-own", T0);
      }
      for (int i = 0; i < pairs.size(); i++) {
        Pair p = pairs.get(i);
        if (i % 2 == 0) { // apart: the first copy is applied before the second is sent
          d.post(p.first(), p.requestId(), T0.plusSeconds(1));
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> appliedCount(d.getRun(p.first())) == 2);
          d.post(p.second(), p.requestId(), T0.plusSeconds(1));
        } else { // at once
          CompletableFuture<Void> a = post(d, p.first(), p.requestId());
          CompletableFuture<Void> b = post(d, p.second(), p.requestId());
          CompletableFuture.allOf(a, b).get();
        }
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> d.count(ProcessorMetrics.EVENTS, "outcome", "reused") >= PAIRS);
      Map<String, RunState.Head> live = states(d, runs);
      for (int i = 0; i < pairs.size(); i++) {
        Pair p = pairs.get(i);
        long on = runs(live, p).stream().filter(h -> h.appliedCount() == 2).count();
        assertThat(on).as("live, %s is on exactly one of its runs", p).isEqualTo(1);
        if (i % 2 == 0) {
          assertThat(live.get(p.first()).appliedCount()).as("live, %s apart", p).isEqualTo(2);
        }
      }

      Deployment.ToolRun rebuild = d.tool("replay", "rebuild", "--timeout-seconds", "120");
      assertThat(rebuild.code()).as(rebuild.err()).isZero();
      d.awaitGeneration(1, Duration.ofSeconds(60));
      assertThat(states(d, runs)).as("run states after a rebuild").isEqualTo(live);

      Deployment.ToolRun reprocess =
          d.tool("replay", "reprocess", "--from", from.toString(), "--timeout-seconds", "120");
      assertThat(reprocess.code()).as(reprocess.err()).isZero();
      d.awaitGeneration(2, Duration.ofSeconds(60));
      assertThat(states(d, runs)).as("run states after a reprocess").isEqualTo(live);
      Replay replay = d.generation().replay();
      Map<String, List<String>> emittedAgain = new TreeMap<>();
      for (ConsumerRecord<String, byte[]> r :
          Topics.readAll(infra.bootstrapServers(), d.topics.events())) {
        if (replay.id().equals(RecordHeaders.get(r.headers(), Replay.HEADER))) {
          emittedAgain
              .computeIfAbsent(
                  RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID), k -> new ArrayList<>())
              .add(r.key());
        }
      }
      for (Pair p : pairs) {
        String took = live.get(p.first()).appliedCount() == 2 ? p.first() : p.second();
        assertThat(emittedAgain.get(p.requestId()))
            .as("%s emitted again by the reprocess", p)
            .containsExactly(took);
      }
    }
  }

  /** Pairs of runs whose keys the default partitioner puts on different partitions. */
  private static List<Pair> pairs() {
    List<Pair> pairs = new ArrayList<>();
    int n = 0;
    for (int i = 0; i < PAIRS; i++) {
      String first = "ra-" + i;
      String second;
      do {
        second = "rb-" + i + "-" + n++;
      } while (partition(second) == partition(first));
      pairs.add(new Pair(first, second, "reused-" + i));
    }
    return pairs;
  }

  private static int partition(String key) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
  }

  private static CompletableFuture<Void> post(Deployment d, String runId, String requestId) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            d.post(runId, requestId, T0.plusSeconds(1));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
  }

  private static List<RunState.Head> runs(Map<String, RunState.Head> states, Pair p) {
    return List.of(states.get(p.first()), states.get(p.second()));
  }

  private static long appliedCount(HttpResponse<byte[]> response) {
    return response.statusCode() == 200
        ? RunStateJson.fromJson(response.body()).appliedCount()
        : -1;
  }

  /** Every run's state as /runs answers it, once it answers 200 for all of them. */
  private static Map<String, RunState.Head> states(Deployment d, List<String> runs) {
    Map<String, RunState.Head> states = new TreeMap<>();
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              states.clear();
              for (String run : runs) {
                HttpResponse<byte[]> r = d.getRun(run);
                if (r.statusCode() != 200) {
                  return false;
                }
                states.put(run, RunStateJson.fromJson(r.body()).head());
              }
              return true;
            });
    return states;
  }
}
