package dev.runlane.ingress.publish;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which topic the ingress writes webhooks to: {@code TOPIC_WEBHOOKS}, or the input of the newest
 * generation the operator tools wrote into the control topic (D35). Read at start and then once a
 * second, so that a {@code runlane partitions grow} moves every ingress to the new topic without a
 * restart. A switch happens only once the producer has the new topic's metadata, so no request
 * waits for it.
 */
public final class InputFollower implements Supplier<String>, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InputFollower.class);

  static final Duration EVERY = Duration.ofSeconds(1);

  /** How long a read of the control topic may take before Kafka counts as unreachable. */
  static final Duration READ_WITHIN = Duration.ofSeconds(3);

  /** The most a switch waits for the new topic's metadata; well below the grow's quiet period. */
  static final Duration SWITCH_WITHIN = Duration.ofSeconds(2);

  private final ControlTopic.Reader control;
  private final String baseInput;
  private final Function<String, Boolean> metadataReady;
  private final ScheduledExecutorService follower;
  private volatile String topic;
  private volatile boolean reachable = true;
  private boolean failing; // only touched by the follower thread

  /**
   * Reads the control topic once (at most {@code timeout}) and starts following it.
   *
   * @param clientSettings Kafka client settings for the control topic's reader
   * @param metadataReady asks the producer for a topic's metadata; false if not there yet
   */
  public static InputFollower start(
      Map<String, Object> clientSettings,
      String controlTopic,
      String baseInput,
      Function<String, Boolean> metadataReady,
      Duration timeout) {
    ControlTopic.Reader control = new ControlTopic.Reader(clientSettings, controlTopic, baseInput);
    InputFollower follower;
    try {
      follower =
          new InputFollower(
              control, baseInput, metadataReady, inputOf(control.latest(timeout), baseInput));
    } catch (RuntimeException e) {
      control.close();
      throw e;
    }
    follower.follower.scheduleWithFixedDelay(
        follower::follow, EVERY.toMillis(), EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return follower;
  }

  private InputFollower(
      ControlTopic.Reader control,
      String baseInput,
      Function<String, Boolean> metadataReady,
      String topic) {
    this.control = control;
    this.baseInput = baseInput;
    this.metadataReady = metadataReady;
    this.topic = topic;
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
    return reachable;
  }

  /** The topic to write the next webhook to. */
  @Override
  public String get() {
    return topic;
  }

  private void follow() {
    try {
      String next = inputOf(control.latest(READ_WITHIN), baseInput);
      failing = false;
      if (!reachable) {
        log.info("Kafka reachable again: ready");
      }
      reachable = true;
      if (next.equals(topic)) {
        return;
      }
      // Fetch the new topic's metadata before switching, so requests do not wait for it; but
      // switch within a few seconds whatever happens: a write to the old input after its
      // generation drained would never be read, where a request that fails now is retried (D35).
      long deadline = System.nanoTime() + SWITCH_WITHIN.toNanos();
      while (!metadataReady.apply(next) && System.nanoTime() - deadline < 0) {
        LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      }
      log.info("writing webhooks to {} from now on (was {})", next, topic);
      topic = next;
    } catch (RuntimeException e) {
      if (!failing) {
        log.warn(
            "cannot reach Kafka (the control topic did not answer within {}): not ready until it"
                + " does: {}",
            READ_WITHIN,
            e.toString());
      }
      failing = true;
      reachable = false;
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
    control.close();
  }
}
