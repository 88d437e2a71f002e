package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Dedup;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's drain with nothing parked (D104): it does not read the pending store, and an event the
 * store holds when the task starts (restored after a failover, never parked by this processor) is
 * still decided at the first drain.
 */
class EmptyDrainTest {
  private static final Instant CREATED = Instant.parse("2026-12-07T10:00:00Z");

  @TempDir Path stateDir;

  private final AtomicInteger scans = new AtomicInteger();
  private KeyValueStore<Long, PendingEvent> pending;

  /** The task's stores, the pending one counting its full scans ({@code all()}). */
  @SuppressWarnings("unchecked")
  private MockProcessorContext<String, byte[]> stores() {
    MockProcessorContext<String, byte[]> ctx =
        TestTopology.context("empty-drain", 0, stateDir.resolve("task"));
    ctx.setCurrentSystemTimeMs(CREATED.toEpochMilli());
    TestTopology.stores(ctx);
    pending = ctx.getStateStore(StoreNames.PENDING);
    KeyValueStore<Long, PendingEvent> real = pending;
    KeyValueStore<Long, PendingEvent> counted =
        (KeyValueStore<Long, PendingEvent>)
            Proxy.newProxyInstance(
                KeyValueStore.class.getClassLoader(),
                new Class<?>[] {KeyValueStore.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("all")) {
                    scans.incrementAndGet();
                  }
                  try {
                    return method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    ctx.addStateStore(counted);
    return ctx;
  }

  private static RunEventProcessor processor() {
    return new RunEventProcessor(
        new TopologySettings(
            TestTopology.TOPICS,
            256,
            Duration.ofMillis(20),
            RedisFailureMode.DEGRADE,
            Duration.ofSeconds(1),
            4096),
        EnvelopeParser.withDefaults(),
        Dedup.disabled(),
        new ProcessorMetrics(new SimpleMeterRegistry()),
        FaultHook.NONE,
        new FailedAttempts(),
        RedisBudget.unbounded(),
        new SharedRoundTrips(Dedup.disabled()),
        InputReader.NONE);
  }

  private static byte[] body(String runId, String requestId) {
    return SumeEvents.event(runId, requestId, CREATED).type("run.updated").bytes();
  }

  private static void drain(MockProcessorContext<String, byte[]> ctx) {
    ctx.scheduledPunctuators().get(0).getPunctuator().punctuate(0);
  }

  private static int applied(MockProcessorContext<String, byte[]> ctx) {
    return ctx.forwarded(ProcessorTopology.EVENTS_SINK).size();
  }

  @Test
  void aDrainWithNothingParkedDoesNotReadThePendingStore() {
    MockProcessorContext<String, byte[]> ctx = stores();
    RunEventProcessor processor = processor();
    processor.init(ctx);
    ctx.setRecordMetadata(TestTopology.TOPICS.webhooks(), 0, 0);
    processor.process(new Record<>("run-1", body("run-1", "r1"), CREATED.toEpochMilli()));
    int beforeDrains = scans.get();

    drain(ctx);
    assertThat(applied(ctx)).isEqualTo(1);
    assertThat(scans.get() - beforeDrains).as("the drain with r1 parked reads it").isEqualTo(1);
    drain(ctx);
    drain(ctx);
    drain(ctx);

    assertThat(scans.get() - beforeDrains).as("three drains with nothing parked").isEqualTo(1);
    processor.close();
  }

  @Test
  void anEventTheStoreHoldsWhenTheTaskStartsIsDecidedAtItsFirstDrain() {
    MockProcessorContext<String, byte[]> ctx = stores();
    RecordHeaders headers = new RecordHeaders();
    // As a restore leaves it: in the store, never parked by this processor.
    pending.put(
        7L,
        new PendingEvent(
            "run-1",
            "r1",
            CREATED,
            "run.updated",
            CREATED.toEpochMilli(),
            headers,
            body("run-1", "r1")));
    RunEventProcessor processor = processor();
    processor.init(ctx);

    drain(ctx);

    assertThat(applied(ctx)).isEqualTo(1);
    assertThat(pending.get(7L)).as("decided, so no longer parked").isNull();
    processor.close();
  }

  /**
   * Streams may call init() again on a processor it revives (D33): what the store holds then, and
   * this processor never parked in its new life, is decided at the next drain.
   */
  @Test
  void aProcessorInitialisedAgainDecidesWhatItsStoreHoldsThen() {
    MockProcessorContext<String, byte[]> ctx = stores();
    RunEventProcessor processor = processor();
    processor.init(ctx);
    ctx.setRecordMetadata(TestTopology.TOPICS.webhooks(), 0, 0);
    processor.process(new Record<>("run-1", body("run-1", "r1"), CREATED.toEpochMilli()));
    drain(ctx);
    drain(ctx); // the count is 0 now
    processor.close();
    pending.put(
        9L,
        new PendingEvent(
            "run-2",
            "r2",
            CREATED,
            "run.updated",
            CREATED.toEpochMilli(),
            new RecordHeaders(),
            body("run-2", "r2")));
    ctx.resetForwards();
    processor.init(ctx);

    ctx.scheduledPunctuators()
        .get(ctx.scheduledPunctuators().size() - 1)
        .getPunctuator()
        .punctuate(0);

    assertThat(applied(ctx)).isEqualTo(1);
    assertThat(pending.get(9L)).as("decided, so no longer parked").isNull();
    processor.close();
  }
}
