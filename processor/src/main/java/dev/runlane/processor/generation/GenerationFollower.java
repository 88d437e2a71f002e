package dev.runlane.processor.generation;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the control topic (D35): once a second reads which generation to run and runs it (starts
 * it, swaps to it, or stops Streams while a replay is prepared), and checks that the running
 * generation's input still fits its state; stops the processor for good when it does not (D36).
 *
 * <p>Checks, swaps and {@link #whileIdle} share this object's lock: a swap in progress finishes
 * before anything else touches the running Streams.
 */
public final class GenerationFollower {
  // Logged under ProcessorApp's name, as before the follower had a class: log filters still match.
  private static final Logger log = LoggerFactory.getLogger("dev.runlane.processor.ProcessorApp");

  /** How often the follower reads the control topic and checks the input. */
  public static final Duration FOLLOW_EVERY = Duration.ofSeconds(1);

  /** Consecutive checks that must find the input missing before the processor stops. */
  static final int MISSING_INPUT_CHECKS = 5;

  /** The Streams client the follower runs, one generation at a time. */
  public interface Streams {
    /** The generation running now, or null while none runs. */
    Generation running();

    /** Starts {@code generation}'s Streams; none runs. */
    void start(Generation generation);

    /** Stops the running generation's Streams, leaving its group. */
    void stop();

    /**
     * The operator tools prepare {@code latest}: no generation runs until it is active. Called
     * before {@link #stop()} on a swap to it, and at start while it is prepared.
     */
    void preparing(Generation latest);
  }

  private final ControlTopic.Reader control;
  private final Admin admin;
  private final String applicationId;
  private final String input;
  private final String controlTopic;
  private final Streams streams;
  private final RetiredInputWatch retired;
  private final Consumer<String> fail;
  private final BooleanSupplier failed;
  private final ScheduledExecutorService executor;
  private boolean followFailing; // guarded by this
  private int missingInputChecks; // guarded by this
  private boolean closed; // guarded by this

  /**
   * @param control the control topic's reader
   * @param admin the client that checks the input's partitions
   * @param applicationId the configured application id: generation 0's, and every generation's base
   * @param input the configured input topic: generation 0's, and the control record's key
   * @param controlTopic the control topic's name, for messages
   * @param streams what runs the generation
   * @param retired counts what lands in an input a grow retired
   * @param fail stops the processor for good, with the reason
   * @param failed whether it has been stopped for good
   */
  public GenerationFollower(
      ControlTopic.Reader control,
      Admin admin,
      String applicationId,
      String input,
      String controlTopic,
      Streams streams,
      RetiredInputWatch retired,
      Consumer<String> fail,
      BooleanSupplier failed) {
    this.control = control;
    this.admin = admin;
    this.applicationId = applicationId;
    this.input = input;
    this.controlTopic = controlTopic;
    this.streams = streams;
    this.retired = retired;
    this.fail = fail;
    this.failed = failed;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "processor-generations");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Runs the generation the control topic names, then follows it every {@link #FOLLOW_EVERY}.
   *
   * @throws InputChangedException if that generation's input no longer fits its state
   * @throws RuntimeException if the control topic or the input cannot be read
   */
  public void start() {
    follow(true);
    executor.scheduleWithFixedDelay(
        () -> follow(false),
        FOLLOW_EVERY.toMillis(),
        FOLLOW_EVERY.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * Reads which generation to run and runs it: starts it, swaps to it, or stops Streams while a
   * replay is prepared; and checks that the running generation's input still fits its state.
   *
   * @param first at start: failures are thrown instead of logged
   */
  private synchronized void follow(boolean first) {
    if (closed || failed.getAsBoolean()) {
      return;
    }
    try {
      Generation latest = readLatest(first);
      requireOurDeployment(latest);
      run(latest, first);
    } catch (InputChangedException e) {
      if (first) {
        throw e;
      }
      // A broker that has not caught up with a topic's creation can answer "unknown topic" for a
      // moment: only a missing input that stays missing stops the processor.
      if (!e.inputMissing() || ++missingInputChecks >= MISSING_INPUT_CHECKS) {
        fail.accept(e.getMessage());
      }
    } catch (RuntimeException e) {
      if (first) {
        throw e;
      }
      if (!followFailing) {
        log.warn("could not follow the control topic (retrying every second): {}", e.toString());
      }
      followFailing = true;
    }
  }

  /** The latest control record, or generation 0 when there is none. Called under the lock. */
  private Generation readLatest(boolean first) {
    Generation latest =
        control
            .latest(Duration.ofSeconds(first ? 30 : 10))
            .orElse(Generation.initial(applicationId, input));
    if (followFailing) {
      log.info("reading the control topic again");
      followFailing = false;
    }
    return latest;
  }

  /**
   * @throws InputChangedException if the control record belongs to another deployment's application
   *     id: two deployments share one input
   */
  private void requireOurDeployment(Generation latest) {
    if (!latest.baseApplicationId().equals(applicationId)) {
      throw new InputChangedException(
          "the control record of "
              + input
              + " in "
              + controlTopic
              + " belongs to PROCESSOR_APPLICATION_ID="
              + latest.baseApplicationId()
              + ", not "
              + applicationId
              + ": two processor deployments share one input");
    }
  }

  /**
   * Runs the generation {@code latest} names: stops Streams while it is prepared, else checks its
   * input and starts it or swaps to it. Called under the lock.
   */
  private void run(Generation latest, boolean first) {
    Generation target = latest.toRun();
    Generation now = streams.running();
    if (target == null) {
      if (now != null || first) {
        log.info(
            "{} is being prepared by the operator tools: Streams stopped until it is active",
            latest.describe());
      }
      streams.preparing(latest);
      if (now != null) {
        streams.stop();
      }
      return;
    }
    InputCheck.verify(admin, target, Duration.ofSeconds(10));
    missingInputChecks = 0;
    retired.check(target);
    if (now != null && now.applicationId().equals(target.applicationId())) {
      return;
    }
    if (now != null) {
      log.info("switching from generation {} to {}", now.number(), target.describe());
      streams.stop();
      // A close can take long (a slow commit, a rebalance); the operator tools may have declared
      // the target stopped meanwhile: the next check then follows what the control topic says
      // now, instead of joining a generation a replay or grow is preparing from (issue 36).
      Generation again = readLatest(false).toRun();
      if (again == null || !again.applicationId().equals(target.applicationId())) {
        log.info(
            "the control topic moved on while generation {} closed: not starting {}",
            now.number(),
            target.describe());
        return;
      }
    }
    streams.start(target);
  }

  /** Runs {@code action} once no check or swap is in progress, under the follower's lock. */
  public synchronized void whileIdle(Runnable action) {
    action.run();
  }

  /**
   * Stops following: no check starts after this returns, and one in progress has finished. No
   * interrupt: a Streams close cut short by one could leave its state dir locked.
   */
  public void close() {
    executor.shutdown();
    synchronized (this) {
      closed = true;
    }
  }
}
