package dev.runlane.bench.load;

import dev.runlane.bench.probe.JitWarmup;
import dev.runlane.bench.report.Latency;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One measured window of webhooks through the pipeline: an open-loop load on the ingress, each
 * request answered 200 matched with its event as a read_committed reader of the events (and stale)
 * topic sees it. The e2e stage's capacity search and half-load windows and each of the soak's
 * windows are one of these.
 */
public final class PipelineWindow {
  private PipelineWindow() {}

  /**
   * One measured window: the end-to-end latency, the ingress's answers, and how many were seen.
   *
   * @param seen requests answered 200 whose event was read back, from the events or the stale topic
   * @param stale how many of those were in the stale topic: the load sends a run's events from many
   *     connections, so two close ones can reach the ingress out of order, and the older is then
   *     correctly classified stale (G3), not lost
   */
  public record Step(Latency.Summary e2e, OpenLoopLoad.Result ingress, long seen, long stale) {
    /**
     * Every request answered 2xx in time, every one visible, and no growing backlog: a backlog
     * raises the median with it, while a single stall of a second (seen on this box at any rate)
     * only moves the tail, which is what the half-load window then measures.
     */
    public boolean keptUp(Duration reorderWindow) {
      return complete() && e2e.p50() < 250 + reorderWindow.toMillis();
    }

    /** Every request answered 2xx in time and every one visible, whatever the latency. */
    public boolean complete() {
      return ingress.keptUp() && seen == ingress.ok();
    }
  }

  /**
   * Runs measured windows of 5 s, results discarded, until the JIT has settled ({@link JitWarmup}),
   * or for at most {@code cap}.
   *
   * <p>The windows are the measurement's own path, reader included: a warm-up of the load alone
   * left the reader's consumer to be compiled in the first measured windows, and the new types it
   * brought to the Kafka client code the broker and Streams share deoptimised that code too: the
   * compiler threads then took 1.2-3.7 s of CPU per 5 s window for the first 20-40 s.
   *
   * @return what happened, for the caller to note (which prints it)
   */
  public static String warmUntilJitSettles(
      OpenLoopLoad load,
      int port,
      String bootstrap,
      TopicNames topics,
      double rate,
      Duration cap,
      Webhooks webhooks)
      throws Exception {
    return JitWarmup.untilSettled(
        cap,
        1,
        String.format("measured windows at %,.0f/s", rate),
        () ->
            measure(
                load,
                port,
                bootstrap,
                topics,
                rate,
                Duration.ZERO,
                Duration.ofSeconds(5),
                webhooks));
  }

  /**
   * Sends {@code rate} requests/s for {@code warmup + measure} and matches each 200 answered in the
   * measured part with its applied event, read by a read_committed consumer from the end of the
   * events topic.
   */
  public static Step measure(
      OpenLoopLoad load,
      int port,
      String bootstrap,
      TopicNames topics,
      double rate,
      Duration warmup,
      Duration measure,
      Webhooks webhooks)
      throws Exception {
    Latency latency = new Latency();
    Map<String, Long> answered = new ConcurrentHashMap<>();
    Map<String, Long> seenEarly = new ConcurrentHashMap<>();
    AtomicLong matched = new AtomicLong();
    Set<String> staleIds = ConcurrentHashMap.newKeySet();
    AtomicBoolean stop = new AtomicBoolean();
    Map<String, Boolean> measuredIds = new ConcurrentHashMap<>();
    CountDownLatch positioned = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () ->
                readEvents(
                    bootstrap,
                    topics.events(),
                    topics.stale(),
                    staleIds,
                    stop,
                    answered,
                    seenEarly,
                    measuredIds,
                    latency,
                    matched,
                    positioned),
            "e2e-reader");
    reader.start();
    if (!positioned.await(30, TimeUnit.SECONDS)) {
      stop.set(true);
      throw new IllegalStateException("the events reader did not get its positions in 30 s");
    }
    OpenLoopLoad.Result result =
        load.run(
            port,
            rate,
            warmup,
            measure,
            // Signed as it is sent (unique request_ids, matched on output): a window signed up
            // front was ~300 MB at 2k/s, copied by the young GC of the JVM the services share.
            i -> webhooks.next(),
            (w, nanos, measured) -> {
              if (!measured) {
                return;
              }
              // One lock with the reader's side: checked and updated apart, an event read between
              // the reader's two lookups was in neither map and never matched (a window then
              // reported one event missing that was in the topic).
              synchronized (answered) {
                measuredIds.put(w.requestId(), Boolean.TRUE);
                Long early = seenEarly.remove(w.requestId());
                if (early != null) {
                  latency.recordNanos(early - nanos);
                  matched.incrementAndGet();
                } else {
                  answered.put(w.requestId(), nanos);
                }
              }
            });
    long wait = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (matched.get() < result.ok() && System.nanoTime() < wait) {
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
    stop.set(true);
    reader.join(10_000);
    long stale = staleIds.stream().filter(measuredIds::containsKey).count();
    return new Step(latency.summary(), result, matched.get(), stale);
  }

  private static void readEvents(
      String bootstrap,
      String topic,
      String staleTopic,
      Set<String> staleIds,
      AtomicBoolean stop,
      Map<String, Long> answered,
      Map<String, Long> seenEarly,
      Map<String, Boolean> measuredIds,
      Latency latency,
      AtomicLong matched,
      CountDownLatch positioned) {
    Map<String, Object> c = KafkaClients.readCommitted(bootstrap);
    c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5);
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts =
          Stream.of(topic, staleTopic)
              .flatMap(t -> consumer.partitionsFor(t).stream())
              .map(p -> new TopicPartition(p.topic(), p.partition()))
              .toList();
      consumer.assign(parts);
      // Only this call's requests count: re-reading earlier windows would load the machine.
      consumer.seekToEnd(parts);
      parts.forEach(consumer::position);
      positioned.countDown();
      while (!stop.get()) {
        var records = consumer.poll(Duration.ofMillis(20));
        long now = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> r : records) {
          String id = RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID);
          if (id == null) {
            continue;
          }
          if (r.topic().equals(staleTopic)) {
            staleIds.add(id);
          }
          synchronized (answered) { // see the answer side in measure()
            Long at = answered.remove(id);
            if (at != null) {
              latency.recordNanos(now - at);
              matched.incrementAndGet();
            } else if (!measuredIds.containsKey(id)) {
              seenEarly.put(id, now); // answer not processed yet, or a warm-up request
            }
          }
        }
      }
    }
  }
}
