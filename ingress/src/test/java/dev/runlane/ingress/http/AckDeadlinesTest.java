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
    AtomicLong now = new AtomicLong();
    List<String> expired = new CopyOnWriteArrayList<>();
    AckDeadlines d = onLoop(() -> new AckDeadlines(vertx, now::get));
    runOnLoop(
        () -> {
          d.add(100, () -> expired.add("a"));
          // Added later with an earlier deadline: a slow upload.
          d.add(50, () -> expired.add("b"));
          d.add(200, () -> expired.add("c"));
        });

    now.set(49);
    runOnLoop(d::sweep);
    assertThat(expired).isEmpty();
    now.set(60);
    runOnLoop(d::sweep);
    assertThat(expired).containsExactly("b");
    now.set(100);
    runOnLoop(d::sweep);
    assertThat(expired).containsExactly("b", "a");
    assertThat(onLoop(d::waiting)).isEqualTo(1);
  }

  @Test
  void aSettledRequestNeverExpires() throws Exception {
    AtomicLong now = new AtomicLong();
    List<String> expired = new CopyOnWriteArrayList<>();
    AckDeadlines d = onLoop(() -> new AckDeadlines(vertx, now::get));
    runOnLoop(
        () -> {
          d.add(10, () -> expired.add("first"));
          AckDeadlines.Waiting middle = d.add(10, () -> expired.add("middle"));
          d.add(10, () -> expired.add("last"));
          d.settle(middle);
          d.settle(middle); // an ack after the request was settled changes nothing
        });

    now.set(10);
    runOnLoop(d::sweep);

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
    List<String> expired = new CopyOnWriteArrayList<>();
    AckDeadlines d = onLoop(() -> new AckDeadlines(vertx, System::nanoTime));
    long farAway = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    runOnLoop(() -> d.settle(d.add(farAway, () -> expired.add("settled"))));

    await().atMost(Duration.ofSeconds(5)).until(() -> !onLoop(d::ticking));
    assertThat(expired).isEmpty();
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
