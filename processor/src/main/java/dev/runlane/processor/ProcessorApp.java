package dev.runlane.processor;

import com.sun.management.OperatingSystemMXBean;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicNames;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.generation.GenerationFollower;
import dev.runlane.processor.generation.InputChangedException;
import dev.runlane.processor.generation.RetiredInputWatch;
import dev.runlane.processor.runs.BearerGuard;
import dev.runlane.processor.runs.RunQueryHandler;
import dev.runlane.processor.topology.FaultHook;
import dev.runlane.processor.topology.StoreNames;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running processor: admin port open, Redis and topics checked, and Kafka Streams running the
 * generation the control topic names (D35), which a {@link GenerationFollower} keeps following; a
 * processor that cannot recover stops for good, fails liveness and tells {@link #onFatal} (D36).
 *
 * <p>What it starts goes on one stack: a start that fails closes what it started, last first, and
 * {@link #close()} closes the same stack: the follower, the admin port, Streams (committing), the
 * control topic's reader, the Kafka admin client, Redis.
 */
public final class ProcessorApp implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProcessorApp.class);

  private final ProcessorConfig config;
  private final Deque<AutoCloseable> started = new ArrayDeque<>(); // guarded by itself
  private final GenerationStreams streams;
  private final AdminServer admin;
  private final GenerationFollower follower;
  private final Object fatalLock = new Object();
  private volatile String fatal;
  private volatile Consumer<String> onFatal = reason -> {};
  private final long checkedMillis; // from the constructor's start to Redis and topics checked

  /** Starts everything but Streams; closes what it started if a step fails. */
  private ProcessorApp(
      ProcessorConfig config, Dedup dedup, PrometheusMeterRegistry registry, FaultHook faultHook) {
    this.config = config;
    long begin = System.nanoTime();
    try {
      started.push(dedup::close);
      // Neither client does I/O before it is used: the control topic is read by the follower.
      Admin kafkaAdmin = Admin.create(adminSettings(config));
      started.push(() -> kafkaAdmin.close(Duration.ofSeconds(5)));
      ControlTopic.Reader control =
          new ControlTopic.Reader(
              config.kafkaClient().withBootstrap(config.bootstrapServers()),
              config.controlTopic(),
              config.topics().webhooks());
      started.push(control);
      this.streams =
          new GenerationStreams(
              config, dedup, registry, faultHook, new ThreadDeathPolicy(this::fail), this::fail);
      // A shutdown stays in the group unless told to leave it: a successor with the same static
      // id then takes the tasks back with no rebalance, if it joins within the session timeout
      // (D29, D102).
      started.push(() -> this.streams.shutdown(config.shutdownLeavesGroup()));
      // The admin port before the checks: a starting processor answers /health/live, and
      // /health/ready 503 until Streams is RUNNING, instead of refusing connections (D85).
      this.admin = startAdmin(config, registry);
      started.push(this.admin);
      this.streams.serveAt(new HostInfo(config.advertisedHost(), this.admin.port()));
      checkRedisAndTopics(dedup, config);
      this.checkedMillis = (System.nanoTime() - begin) / 1_000_000;
      this.follower =
          new GenerationFollower(
              control,
              kafkaAdmin,
              config.applicationId(),
              config.topics().webhooks(),
              config.controlTopic(),
              this.streams,
              new RetiredInputWatch(kafkaAdmin, registry),
              this::fail,
              () -> fatal != null);
      started.push(
          () -> {
            this.follower.close();
            log.info("processor stopping");
          });
    } catch (RuntimeException | Error e) {
      closeStarted(e);
      throw e;
    }
  }

  /** The admin port: liveness, readiness (Streams RUNNING), metrics and the run query. */
  private AdminServer startAdmin(ProcessorConfig config, PrometheusMeterRegistry registry) {
    return AdminServer.start(
        "0.0.0.0",
        config.port(),
        registry,
        () -> fatal == null,
        this.streams::isRunning,
        Map.of(
            "/runs/",
            new BearerGuard(
                config.runsToken(),
                new RunQueryHandler(
                    this.streams::streams,
                    StoreNames.RUNS,
                    this.streams::self,
                    this.streams,
                    config.runsToken()))));
  }

  /**
   * Checks Redis and ensures the topics at once: each is a round trip or more to a server of its
   * own, and both pass before the follower may start Streams (D85).
   */
  private static void checkRedisAndTopics(Dedup dedup, ProcessorConfig config) {
    CompletableFuture<Void> redis =
        CompletableFuture.runAsync(
            dedup::verifyAccess,
            task -> {
              Thread t = new Thread(task, "processor-redis-check");
              t.setDaemon(true);
              t.start();
            });
    ensureTopics(config);
    try {
      redis.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  /**
   * Starts the processor on the generation the control topic names.
   *
   * @throws InputChangedException if that generation's input no longer fits its state
   */
  public static ProcessorApp start(
      ProcessorConfig config, Dedup dedup, PrometheusMeterRegistry registry, FaultHook faultHook) {
    long begin = System.nanoTime();
    ProcessorApp app = new ProcessorApp(config, dedup, registry, faultHook);
    try {
      app.follower.start();
    } catch (RuntimeException | Error e) {
      // An Error too (a native library that fails to load as the stores open): the admin port is
      // open by now (D85), and left open it would answer live for a process that never runs.
      try {
        app.close();
      } catch (RuntimeException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
    // Where a start's seconds go, for an operator timing a deploy (D85); and the CPU the JVM has
    // spent so far, which on a shared machine says more than the wall clock (D105).
    log.info(
        "processor start took {} ms: redis and topics checked at {} ms; JVM up {} ms, its CPU {} ms",
        (System.nanoTime() - begin) / 1_000_000,
        app.checkedMillis,
        ManagementFactory.getRuntimeMXBean().getUptime(),
        processCpuMillis());
    return app;
  }

  /** The CPU time of this JVM so far, or -1 where the platform does not say. */
  private static long processCpuMillis() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os
        ? os.getProcessCpuTime() / 1_000_000
        : -1;
  }

  /** Stops for good: liveness turns DOWN, Streams closes, {@link #onFatal} hears why. */
  private void fail(String reason) {
    synchronized (fatalLock) {
      if (fatal != null) {
        return;
      }
      fatal = reason;
    }
    log.error("processor stopped: {}", reason);
    // Not on a stream thread: closing Streams from its own thread would wait for itself.
    // Once the follower is idle: a swap in progress finishes first, and is then stopped too.
    Thread stopper =
        new Thread(
            () -> {
              follower.whileIdle(() -> streams.stop(false));
              onFatal.accept(reason);
            },
            "processor-fatal");
    stopper.setDaemon(true);
    stopper.start();
  }

  /**
   * Called once, on a thread of its own, when the processor stops for good (see {@link #fatal}).
   */
  public void onFatal(Consumer<String> listener) {
    this.onFatal = listener;
    String reason = fatal;
    if (reason != null) {
      listener.accept(reason);
    }
  }

  /** Why the processor stopped for good, or null while it runs (or can recover on its own). */
  public String fatal() {
    return fatal;
  }

  private static void ensureTopics(ProcessorConfig config) {
    TopicNames t = config.topics();
    TopicSettings s = config.topicSettings();
    try (Admin admin = Admin.create(adminSettings(config))) {
      TopicEnsurer.ensure(
          admin,
          List.of(
              config
                  .topicPolicy()
                  .apply(ControlTopic.newTopic(config.controlTopic(), s), TopicPolicy.Role.OTHER)),
          Duration.ofSeconds(30));
      int max = TopicEnsurer.maxMessageBytes(config.maxBodyBytes());
      TopicPolicy policy = config.topicPolicy();
      Map<String, TopicPolicy.Role> roles = new LinkedHashMap<>();
      roles.put(t.webhooks(), TopicPolicy.Role.WEBHOOKS);
      roles.put(t.dlq(), TopicPolicy.Role.DLQ);
      roles.put(t.events(), TopicPolicy.Role.EVENTS);
      roles.put(t.stale(), TopicPolicy.Role.OTHER);
      roles.put(t.runs(), TopicPolicy.Role.OTHER);
      TopicEnsurer.ensure(
          admin,
          roles.entrySet().stream()
              .map(
                  e -> {
                    NewTopic topic =
                        e.getKey().equals(t.runs())
                            ? TopicEnsurer.compacted(e.getKey(), s)
                            : TopicEnsurer.plain(e.getKey(), s);
                    return TopicEnsurer.sized(policy.apply(topic, e.getValue()), max);
                  })
              .toList(),
          Duration.ofSeconds(30));
      if (config.decisionLog().enabled()) {
        // Its own retention, not the policy's: a decision is small, and an incident asks about
        // deliveries of the past days (D86).
        TopicEnsurer.ensure(
            admin,
            List.of(policy.apply(config.decisionLog().newTopic(s), TopicPolicy.Role.OTHER)),
            Duration.ofSeconds(30));
      }
      // Topics that existed are the operator's: say what is weaker than asked, and go on.
      policy
          .weaker(admin, roles, s.replicationFactor(), config.bootstrapServers())
          .forEach(w -> log.warn("topic settings: {}", w));
    }
  }

  private static Map<String, Object> adminSettings(ProcessorConfig config) {
    Map<String, Object> m = config.kafkaClient().withBootstrap(config.bootstrapServers());
    m.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return m;
  }

  /** The Streams client of the running generation, or null while none runs. */
  public KafkaStreams streams() {
    return streams.streams();
  }

  /** The generation running now, or null while none runs (a replay being prepared, stopped). */
  public Generation generation() {
    return streams.running();
  }

  /**
   * Waits until Streams is RUNNING (every task assigned and restored).
   *
   * @throws IllegalStateException if Streams stopped instead, or after {@code timeout}
   */
  public void awaitRunning(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    KafkaStreams.State state;
    while ((state = stateNow()) != KafkaStreams.State.RUNNING) {
      if (fatal != null) {
        throw new IllegalStateException("the processor stopped while starting: " + fatal);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the processor was not RUNNING within " + timeout + " (state " + state + ")");
      }
      // A restart's time to RUNNING is read through this wait, so its poll is short: 5 ms of
      // error on a figure of seconds (D28).
      LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
    }
  }

  /** The running generation's Streams state, or CREATED while none runs yet. */
  private KafkaStreams.State stateNow() {
    KafkaStreams s = streams();
    return s == null ? KafkaStreams.State.CREATED : s.state();
  }

  public int adminPort() {
    return admin.port();
  }

  public ProcessorConfig config() {
    return config;
  }

  /**
   * Closes in reverse order of start: follower (a swap in progress finishes first), admin port,
   * Streams (committing), control topic reader, Kafka admin client, Redis. Idempotent.
   */
  @Override
  public void close() {
    synchronized (started) {
      if (started.isEmpty()) {
        return;
      }
      RuntimeException failure = closeStarted(null);
      log.info("processor stopped");
      if (failure != null) {
        throw failure;
      }
    }
  }

  /**
   * Closes everything started so far, last first, each even if one before it failed.
   *
   * @param cause the start-up failure the close failures are added to, or null on a close
   * @return the first close failure when there is no {@code cause}, or null
   */
  private RuntimeException closeStarted(Throwable cause) {
    RuntimeException first = null;
    synchronized (started) {
      while (!started.isEmpty()) {
        try {
          started.pop().close();
        } catch (Exception e) {
          if (cause != null) {
            cause.addSuppressed(e);
          } else if (first == null) {
            first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
          } else {
            first.addSuppressed(e);
          }
        }
      }
    }
    return first;
  }
}
