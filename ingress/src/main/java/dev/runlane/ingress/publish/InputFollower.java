package dev.runlane.ingress.publish;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.IngressAck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which topic the ingress writes webhooks to: {@code TOPIC_WEBHOOKS}, or the input of the newest
 * generation the operator tools wrote into the control topic (D35). Read at start and then once a
 * second, so that a {@code runlane partitions grow} moves every ingress to the new topic without a
 * restart. A switch happens only once the producer has the new topic's metadata, so no request
 * waits for it.
 *
 * <p>A grow must know when no write can land in the input it retires any more (D71): the follower
 * acknowledges each input it writes to, once the writes still in flight to the one before have been
 * answered ({@link IngressAnnouncer}); and the ingress writes nothing while its last read of the
 * control topic is older than {@code INGRESS_CONTROL_STALE_MS} (frozen, or cut off from the control
 * topic's leader), since its input may have been retired meanwhile.
 */
public final class InputFollower implements InputLeases, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InputFollower.class);

  static final Duration EVERY = Duration.ofSeconds(1);

  /** How long a read of the control topic may take before Kafka counts as unreachable. */
  static final Duration READ_WITHIN = Duration.ofSeconds(3);

  /** The most a switch waits for the new topic's metadata. */
  static final Duration SWITCH_WITHIN = Duration.ofSeconds(2);

  private final ControlTopic.Reader control;
  private final String controlTopic;
  private final String baseInput;
  private final Function<String, Boolean> metadataReady;
  private final IngressAnnouncer announcer;
  private final Duration staleAfter;
  private final Duration deliveryTimeout;
  private final Duration goneAfter;
  private final Runnable beforeRead;
  private final ScheduledExecutorService follower;
  private final List<WriteTarget> draining = new ArrayList<>(); // only the follower thread
  private volatile WriteTarget current;
  private volatile long viewedAt; // System.nanoTime() when the last acknowledged read began
  private boolean viewedOnce; // guarded by this
  private volatile boolean reachable = true;
  private int generation; // only touched by the follower thread (after start)
  private boolean failing; // only touched by the follower thread

  /** What the follower needs besides the control topic's reader. */
  public record Settings(
      Map<String, Object> clientSettings,
      String controlTopic,
      String baseInput,
      Duration staleAfter,
      Duration deliveryTimeout,
      Duration startTimeout,
      Runnable beforeRead) {}

  /**
   * Reads the control topic once (at most {@code startTimeout}) and starts following it.
   *
   * @param producer the ingress's producer: its metadata, and the acknowledgements
   */
  public static InputFollower start(Settings s, Producer<byte[], byte[]> producer) {
    ControlTopic.Reader control =
        new ControlTopic.Reader(s.clientSettings(), s.controlTopic(), s.baseInput());
    InputFollower follower;
    try {
      long began = System.nanoTime();
      Optional<Generation> latest = control.latest(s.startTimeout());
      follower =
          new InputFollower(
              control,
              s,
              topic -> WebhookPublisher.hasMetadata(producer, topic),
              new IngressAnnouncer(
                  producer, s.controlTopic(), s.baseInput(), IngressAnnouncer.thisInstance()),
              inputOf(latest, s.baseInput()));
      follower.generation = latest.map(Generation::number).orElse(0);
      follower.awaitFirstAck(began, s.startTimeout());
    } catch (RuntimeException e) {
      control.close();
      throw e;
    }
    follower.follower.scheduleWithFixedDelay(
        follower::follow, EVERY.toMillis(), EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return follower;
  }

  /**
   * Writes the first acknowledgement and waits until the broker holds it: no webhook is accepted
   * before a grow can see this ingress (D71).
   */
  private void awaitFirstAck(long began, Duration timeout) {
    String topic = IngressAck.topic(controlTopic);
    long deadline = System.nanoTime() + timeout.toNanos();
    CountDownLatch acked = new CountDownLatch(1);
    try {
      while (System.nanoTime() - deadline < 0) {
        if (metadataReady.apply(topic)) {
          announce(
              () -> {
                viewed(began);
                acked.countDown();
              });
          if (acked.await(1, TimeUnit.SECONDS)) {
            return;
          }
        } else {
          LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the first acknowledgement", e);
    }
    throw new IllegalStateException(
        "could not write this ingress's acknowledgement to "
            + topic
            + " within "
            + timeout
            + ": does its principal have Write on that topic?");
  }

  private InputFollower(
      ControlTopic.Reader control,
      Settings s,
      Function<String, Boolean> metadataReady,
      IngressAnnouncer announcer,
      String topic) {
    this.control = control;
    this.controlTopic = s.controlTopic();
    this.baseInput = s.baseInput();
    this.metadataReady = metadataReady;
    this.announcer = announcer;
    this.staleAfter = s.staleAfter();
    this.deliveryTimeout = s.deliveryTimeout();
    this.goneAfter = staleAfter.plus(s.deliveryTimeout()).plus(IngressAnnouncer.EVERY);
    this.beforeRead = s.beforeRead();
    this.current = new WriteTarget(topic);
    this.follower =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "ingress-generations");
              t.setDaemon(true);
              return t;
            });
  }

  private static String inputOf(Optional<Generation> latest, String baseInput) {
    return latest.map(Generation::ingressInput).orElse(baseInput);
  }

  /**
   * Whether the last read of the control topic, at most a second or two ago, was answered: false
   * while Kafka cannot be reached, so the ingress turns not ready and a load balancer sends Sume
   * elsewhere (its requests would get 503 here anyway).
   */
  public boolean kafkaReachable() {
    return reachable && viewAge().compareTo(staleAfter) <= 0;
  }

  /** The topic the next webhook goes to. */
  public String topic() {
    return current.topic();
  }

  /** How long ago the last acknowledged read of the control topic began (D71). */
  public Duration viewAge() {
    return Duration.ofNanos(System.nanoTime() - viewedAt);
  }

  @Override
  public WriteTarget acquire() {
    Duration age = viewAge();
    if (age.compareTo(staleAfter) > 0) {
      throw new ControlViewStale(controlTopic, age, staleAfter);
    }
    while (true) {
      WriteTarget target = current;
      if (target.tryAcquire()) {
        return target;
      }
      if (target == current) { // retired and not replaced: the ingress is stopping
        throw new ControlViewStale("the ingress is stopping: nothing more is written");
      }
    }
  }

  private void follow() {
    try {
      beforeRead.run();
      long began = System.nanoTime();
      Optional<Generation> latest = control.latest(READ_WITHIN);
      String next = inputOf(latest, baseInput);
      failing = false;
      if (!reachable) {
        log.info("Kafka reachable again: ready");
      }
      reachable = true;
      if (!next.equals(current.topic())) {
        switchTo(next);
      }
      generation = latest.map(Generation::number).orElse(0);
      announce(() -> viewed(began));
    } catch (RuntimeException e) {
      if (!failing) {
        log.warn(
            "cannot reach Kafka (the control topic did not answer within {}): not ready until it"
                + " does, and webhooks are answered 503 once the last read is {} old: {}",
            READ_WITHIN,
            staleAfter,
            e.toString());
      }
      failing = true;
      reachable = false;
    }
  }

  /**
   * Fetches the new topic's metadata before switching, so requests do not wait for it; but switches
   * within a few seconds whatever happens. The old target is retired: writes already started there
   * are waited for before the move is acknowledged (D71).
   */
  private void switchTo(String next) {
    long deadline = System.nanoTime() + SWITCH_WITHIN.toNanos();
    while (!metadataReady.apply(next) && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
    }
    WriteTarget old = current;
    current = new WriteTarget(next);
    old.retire();
    draining.add(old);
    log.info("writing webhooks to {} from now on (was {})", next, old.topic());
  }

  private void announce(Runnable onAcked) {
    draining.removeIf(WriteTarget::drained);
    announcer.announce(
        new IngressAck(
            announcer.instance(),
            generation,
            current.topic(),
            draining.isEmpty(),
            staleAfter.toMillis(),
            goneAfter.toMillis()),
        onAcked);
  }

  /** A read that began at {@code began} is acknowledged: the view is that fresh (never older). */
  private synchronized void viewed(long began) {
    if (!viewedOnce || began - viewedAt > 0) {
      viewedAt = began;
      viewedOnce = true;
    }
  }

  @Override
  public void close() {
    follower.shutdownNow();
    try {
      follower.awaitTermination(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // Withdraw only once every write this ingress started was answered: until then a grow must
    // keep waiting for it, so a write still on its way to a retired input is not left behind (D71).
    current.retire();
    draining.add(current);
    long deadline = System.nanoTime() + deliveryTimeout.toNanos();
    while (!draining.stream().allMatch(WriteTarget::drained) && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
    }
    if (draining.stream().allMatch(WriteTarget::drained)) {
      announcer.withdraw(Duration.ofSeconds(2));
    } else {
      log.info("stopping with writes unanswered: this ingress's acknowledgement is left to expire");
    }
    control.close();
  }
}
