package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Load in waves for the tests that fail a Redis node under it (a cluster's primary, Sentinel's
 * primary): wave {@code e} is event {@code e} of every run, and the checks that nothing was lost,
 * applied twice or applied out of order.
 */
final class RedisWaves {
  private static final Instant T0 = Instant.parse("2026-12-07T11:00:00Z");
  static final String NODE_FALLBACKS = "runlane.processor.redis.node.fallbacks";

  private RedisWaves() {}

  /**
   * Starts {@code h} with Redis timeouts a busy test machine never reaches: a live node must not
   * count as slow (which backs it off, D42), so that only the failed node's keys fall back. A
   * killed node refuses connections at once, so the failure is still seen at once.
   */
  static void startPatient(ProcessorHarness h) {
    h.with("REDIS_TIMEOUT_MS", "3000").with("REDIS_SLOW_MS", "2000").start();
  }

  static String id(int run, int event) {
    return "w" + run + "-e" + event;
  }

  /** Sends event {@code event} of runs 0..runs-1 and waits for the acks. */
  static void send(ProcessorHarness h, int runs, int event) {
    for (int r = 0; r < runs; r++) {
      h.sendAsync("run-" + r, id(r, event), T0.plusSeconds(event), "");
    }
    h.flush();
  }

  static void awaitDecided(ProcessorHarness h, int records) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> h.decided() >= records);
  }

  /** Every event applied once, and each run's last state its newest event's. */
  static void assertAppliedOnceInOrder(
      ProcessorHarness h, ProcessorHarness.Reader events, int runs, int perRun) {
    await().atMost(Duration.ofSeconds(60)).until(events::caughtUp);
    List<String> applied = events.requestIds();
    assertThat(new HashSet<>(applied)).as("none lost").hasSize(runs * perRun);
    assertThat(applied).as("none applied twice").hasSize(runs * perRun);
    Map<String, RunState> last = new HashMap<>();
    try (ProcessorHarness.Reader states = h.new Reader(h.topics.runs())) {
      await().atMost(Duration.ofSeconds(60)).until(states::caughtUp);
      for (ConsumerRecord<String, byte[]> r : states.records) {
        last.put(r.key(), RunStateJson.fromJson(r.value()));
      }
    }
    Set<String> regressed = new HashSet<>();
    last.forEach(
        (run, state) -> {
          if (!state.lastRequestId().endsWith("-e" + (perRun - 1))) {
            regressed.add(run);
          }
        });
    assertThat(last).hasSize(runs);
    assertThat(regressed).as("no order regression").isEmpty();
  }

  /**
   * No stream thread died on the way: a Redis node failing must cost its keys a decision on the run
   * store, never a thread (which Streams would replace as StreamThread-2 and up).
   */
  static void assertNoStreamThreadDied(ProcessorHarness h) {
    assertThat(h.app.streams().metadataForLocalThreads())
        .as("stream threads (a replaced one is numbered 2 and up)")
        .allSatisfy(t -> assertThat(t.threadName()).endsWith("-StreamThread-1"));
  }

  /** The claims each node did not answer, by node, those with none left out. */
  static Map<String, Double> fallbacks(ProcessorHarness h) {
    Map<String, Double> byNode = new HashMap<>();
    for (Counter c : h.registry.find(NODE_FALLBACKS).counters()) {
      if (c.count() > 0) {
        byNode.put(c.getId().getTag("node"), c.count());
      }
    }
    return byNode;
  }

  /** The node as the processor names it: by the port it announces (its TLS port with TLS). */
  static String node(EmbeddedRedis redis) {
    return redis.host() + ":" + (redis.tlsPort() != 0 ? redis.tlsPort() : redis.port());
  }
}
