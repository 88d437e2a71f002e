package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunStateJson;
import dev.runlane.processor.topology.FaultHook;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /runs/{id}} never steps back while a replay re-derives the run (G3, D44): every answer
 * for a run is its newest committed state, or a 503 that says so and when to ask again, never an
 * older state and never a 404 once the run existed. The new generation is held mid-way through
 * re-deriving one run (its last event's decision waits for the test), so the query meets it there
 * on every machine, however fast.
 */
@RealInfra
class RunQueryDuringReplayIT {
  private static final int RUNS = 6;
  private static final int EVENTS_PER_RUN = 15;
  private static final String HELD_RUN = "run-0";

  @Test
  void aRebuildNeverAnswersAnOlderStateOrA404(Infra infra) throws Exception {
    replayNeverStepsBack(infra, "runs-rebuild", false);
  }

  @Test
  void aReprocessNeverAnswersAnOlderStateOrA404(Infra infra) throws Exception {
    replayNeverStepsBack(infra, "runs-reprocess", true);
  }

  private void replayNeverStepsBack(Infra infra, String prefix, boolean reprocess)
      throws Exception {
    HoldSecondDecision hold = new HoldSecondDecision(requestId(HELD_RUN, EVENTS_PER_RUN - 1));
    try (Deployment d =
        new Deployment(infra, prefix, 4, 2).withFaultHook(hold).startIngress().startProcessors()) {
      Instant t0 = Instant.parse("2026-12-10T10:00:00Z");
      Instant from = null;
      for (int i = 0; i < EVENTS_PER_RUN; i++) {
        if (i == EVENTS_PER_RUN / 2) {
          from = Instant.now();
        }
        for (int r = 0; r < RUNS; r++) {
          d.post("run-" + r, requestId("run-" + r, i), t0.plusSeconds(i));
        }
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> allRunsAt(d, EVENTS_PER_RUN));

      Poller poller = new Poller(d);
      CompletableFuture<Deployment.ToolRun> replay =
          CompletableFuture.supplyAsync(
              reprocess
                  ? replayCommand(
                      d,
                      "replay",
                      "reprocess",
                      "--from",
                      from.toString(),
                      "--timeout-seconds",
                      "120")
                  : replayCommand(d, "replay", "rebuild", "--timeout-seconds", "120"));

      // Generation 1 is deciding the held run's last event again: the run's newest committed
      // state there is at most one event short of what generation 0 answered.
      assertThat(hold.reached.await(90, TimeUnit.SECONDS)).as("generation 1 re-derives").isTrue();
      List<Answer> meanwhile = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        meanwhile.add(Answer.of(d.getRun(HELD_RUN)));
      }
      hold.release.countDown();

      Deployment.ToolRun run = replay.get(150, TimeUnit.SECONDS);
      assertThat(run.code()).as(run.err()).isZero();
      await().atMost(Duration.ofSeconds(60)).until(() -> allRunsAt(d, EVENTS_PER_RUN));
      Map<String, List<Answer>> seen = poller.stop();
      seen.forEach(
          (runId, answers) ->
              System.out.println(
                  runId
                      + ": "
                      + answers.stream().filter(a -> a.status() == 200).count()
                      + " answered 200, "
                      + answers.stream().filter(Answer::isRederiving).count()
                      + " answered 503 re_deriving, of "
                      + answers.size()));

      assertThat(meanwhile)
          .as("answers for %s while generation 1 re-derives it", HELD_RUN)
          .allSatisfy(
              a ->
                  assertThat(a.isNewest(EVENTS_PER_RUN) || a.isRederiving())
                      .as(a.toString())
                      .isTrue());
      assertThat(seen).hasSize(RUNS);
      seen.forEach(
          (runId, answers) -> {
            long newest = 0;
            for (Answer a : answers) {
              assertThat(a.status()).as("%s after %s: %s", runId, newest, answers).isIn(200, 503);
              if (a.status() == 200) {
                assertThat(a.appliedCount())
                    .as("%s's applied_count, answered after %s: %s", runId, newest, answers)
                    .isGreaterThanOrEqualTo(newest);
                newest = a.appliedCount();
              } else {
                assertThat(a.retryAfter()).as("%s: %s", runId, a).isNotNull();
              }
            }
          });
    }
  }

  private static Supplier<Deployment.ToolRun> replayCommand(Deployment d, String... args) {
    return () -> d.tool(args);
  }

  private static String requestId(String runId, int i) {
    return runId + "-e" + i;
  }

  private static boolean allRunsAt(Deployment d, int count) throws Exception {
    for (int r = 0; r < RUNS; r++) {
      Answer a = Answer.of(d.getRun("run-" + r));
      if (a.status() != 200 || a.appliedCount() != count) {
        return false;
      }
    }
    return true;
  }

  /** One answer of {@code GET /runs/{id}}, as much of it as the assertions need. */
  record Answer(int status, long appliedCount, String body, String retryAfter) {
    static Answer of(HttpResponse<byte[]> response) {
      long count =
          response.statusCode() == 200 ? RunStateJson.fromJson(response.body()).appliedCount() : -1;
      return new Answer(
          response.statusCode(),
          count,
          response.statusCode() == 200 ? "" : new String(response.body(), StandardCharsets.UTF_8),
          response.headers().firstValue("Retry-After").orElse(null));
    }

    boolean isNewest(long count) {
      return status == 200 && appliedCount == count;
    }

    boolean isRederiving() {
      return status == 503 && retryAfter != null && body.contains("\"error\":\"re_deriving\"");
    }
  }

  /** Asks for every run, every 20 ms, and keeps every answer in order. */
  private static final class Poller {
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private final Map<String, List<Answer>> answers = new ConcurrentHashMap<>();
    private final List<Exception> failures = new CopyOnWriteArrayList<>();

    Poller(Deployment d) {
      executor.scheduleWithFixedDelay(
          () -> {
            for (int r = 0; r < RUNS; r++) {
              String runId = "run-" + r;
              try {
                Answer a = Answer.of(d.getRun(runId));
                answers.computeIfAbsent(runId, k -> new CopyOnWriteArrayList<>()).add(a);
              } catch (Exception e) {
                failures.add(e);
              }
            }
          },
          0,
          20,
          TimeUnit.MILLISECONDS);
    }

    Map<String, List<Answer>> stop() throws InterruptedException {
      executor.shutdown();
      assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      assertThat(failures).isEmpty();
      return answers;
    }
  }

  /**
   * Holds the second decision of one request id (generation 0 decided it first, so the second is
   * generation 1 re-deriving it) until the test releases it.
   */
  private static final class HoldSecondDecision implements FaultHook {
    final CountDownLatch reached = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final String requestId;
    private final AtomicInteger decisions = new AtomicInteger();

    HoldSecondDecision(String requestId) {
      this.requestId = requestId;
    }

    @Override
    public void afterMarkDone(Collection<String> requestIds) {}

    @Override
    public void beforeDecide(String id) {
      if (requestId.equals(id) && decisions.incrementAndGet() == 2) {
        reached.countDown();
        try {
          // Bounded: the stream thread's transaction must not outlive its timeout.
          release.await(8, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }
}
