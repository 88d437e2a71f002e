package dev.runlane.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** On a real event loop, as the handler uses it: every call is made on the loop. */
class AckDeadlinesTest {

  private Vertx vertx;
  private Context loop;

  /** The manual clock's time, in nanoseconds. */
  private final AtomicLong now = new AtomicLong();

  /** The names of the requests that expired, in order. */
  private final List<String> expired = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void eachRequestExpiresAtItsOwnDeadlineWhateverTheOrderItWasAddedIn() throws Exception {
    AckDeadlines d = onManualClock();
    add(d, 100, "a");
    add(d, 50, "b"); // added later with an earlier deadline: a slow upload
    add(d, 200, "c");

    sweepAt(d, 49);
    assertThat(expired).isEmpty();
    sweepAt(d, 60);
    assertThat(expired).containsExactly("b");
    sweepAt(d, 100);
    assertThat(expired).containsExactly("b", "a");
    assertThat(onLoop(d::waiting)).isEqualTo(1);
  }

  @Test
  void aSettledRequestNeverExpires() throws Exception {
    AckDeadlines d = onManualClock();
    add(d, 10, "first");
    AckDeadlines.Waiting middle = add(d, 10, "middle");
    add(d, 10, "last");
    runOnLoop(
        () -> {
          d.settle(middle);
          d.settle(middle); // an ack after the request was settled changes nothing
        });

    sweepAt(d, 10);

    assertThat(expired).containsExactly("first", "last");
    assertThat(onLoop(d::waiting)).isZero();
  }

  @Test
  void theLoopsTimerAnswersAtTheDeadlineAndStopsOnceNothingWaits() throws Exception {
    List<Long> lateMillis = new CopyOnWriteArrayList<>();
    AckDeadlines d = onLoop(() -> new AckDeadlines(vertx, System::nanoTime));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
    onLoop(
        () ->
            d.add(
                deadline,
                () -> lateMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deadline))));
    assertThat(onLoop(d::ticking)).isTrue();

    await().atMost(Duration.ofSeconds(5)).until(() -> !lateMillis.isEmpty());

    assertThat(lateMillis.get(0)).isBetween(0L, 1_000L);
    await().atMost(Duration.ofSeconds(5)).until(() -> !onLoop(d::ticking));
    assertThat(onLoop(d::waiting)).isZero();
  }

  @Test
  void settlingTheLastWaitingRequestStopsTheTimerAtTheNextSweep() throws Exception {
    AckDeadlines d = onLoop(() -> new AckDeadlines(vertx, System::nanoTime));
    long farAway = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    runOnLoop(() -> d.settle(d.add(farAway, expiring("settled"))));

    await().atMost(Duration.ofSeconds(5)).until(() -> !onLoop(d::ticking));
    assertThat(expired).isEmpty();
  }

  /** Deadlines on the manual clock {@link #now}, made on the loop. */
  private AckDeadlines onManualClock() throws Exception {
    return onLoop(() -> new AckDeadlines(vertx, now::get));
  }

  /** What a request named {@code name} does when it expires: joins {@link #expired}. */
  private Runnable expiring(String name) {
    return () -> expired.add(name);
  }

  /** Adds, on the loop, a request named {@code name} that expires at {@code deadline}. */
  private AckDeadlines.Waiting add(AckDeadlines d, long deadline, String name) throws Exception {
    return onLoop(() -> d.add(deadline, expiring(name)));
  }

  /** Sets the manual clock to {@code nanos} and sweeps. */
  private void sweepAt(AckDeadlines d, long nanos) throws Exception {
    now.set(nanos);
    runOnLoop(d::sweep);
  }

  private void runOnLoop(Runnable action) throws Exception {
    onLoop(
        () -> {
          action.run();
          return null;
        });
  }

  private <T> T onLoop(Supplier<T> action) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    loop.runOnContext(
        v -> {
          try {
            result.complete(action.get());
          } catch (RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    return result.get(10, TimeUnit.SECONDS);
  }
}
