package dev.runlane.ingress;

import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.IngressAck;
import dev.runlane.common.http.AdminServer;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicPolicy;
import dev.runlane.common.signature.StandardWebhooksVerifier;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.ingress.http.IngressMeters;
import dev.runlane.ingress.http.IngressServer;
import dev.runlane.ingress.http.ResponseWriter;
import dev.runlane.ingress.http.Routes;
import dev.runlane.ingress.http.WebhookHandler;
import dev.runlane.ingress.http.WebhookSource;
import dev.runlane.ingress.publish.InputFollower;
import dev.runlane.ingress.publish.ProducerSettings;
import dev.runlane.ingress.publish.WebhookPublisher;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingress, wired by hand: admin server, topics, the one producer, the webhook server.
 *
 * <p>Start order: admin server (live, not ready), topics, producer and its metadata, webhook
 * server, then ready. {@link #close()} runs the reverse: not ready, stop accepting, let in-flight
 * requests get their true answer, flush and close the producer, stop Vert.x and the admin server.
 */
public final class IngressApp implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(IngressApp.class);
  private static final int ADMIN_REQUEST_TIMEOUT_MS = 15_000;
  private static final Duration PRODUCER_CLOSE_TIMEOUT = Duration.ofSeconds(10);

  private final IngressConfig config;
  private final AtomicBoolean ready;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AdminServer admin;
  private final InputFollower input;
  private final WebhookPublisher publisher;
  private final KafkaClientMetrics producerMetrics;
  private final Vertx vertx;
  private final IngressServer server;

  private IngressApp(
      IngressConfig config,
      AtomicBoolean ready,
      AdminServer admin,
      InputFollower input,
      WebhookPublisher publisher,
      KafkaClientMetrics producerMetrics,
      Vertx vertx,
      IngressServer server) {
    this.config = config;
    this.ready = ready;
    this.admin = admin;
    this.input = input;
    this.publisher = publisher;
    this.producerMetrics = producerMetrics;
    this.vertx = vertx;
    this.server = server;
  }

  /**
   * Starts the ingress and returns once it is ready.
   *
   * @throws RuntimeException if Kafka is unreachable within the start-up timeout, a topic may not
   *     be created, or a port cannot be bound (everything started so far is closed again)
   */
  public static IngressApp start(IngressConfig config, PrometheusMeterRegistry registry) {
    return start(config, registry, () -> {});
  }

  /**
   * Starts the ingress with a fault hook: {@code beforeControlRead} runs on the follower thread
   * before each read of the control topic, so a test that blocks it freezes the follower as a
   * paused process or a partition from the control topic's leader would.
   */
  public static IngressApp start(
      IngressConfig config, PrometheusMeterRegistry registry, Runnable beforeControlRead) {
    AtomicBoolean ready = new AtomicBoolean();
    AtomicReference<InputFollower> follower = new AtomicReference<>();
    List<AutoCloseable> started = new ArrayList<>();
    try {
      // Ready once started, and while Kafka answers: during an outage every request would get a
      // 503, so a load balancer had better send it elsewhere.
      AdminServer admin =
          AdminServer.start(
              config.host(),
              config.adminPort(),
              registry,
              () -> ready.get() && follower.get() != null && follower.get().kafkaReachable(),
              Map.of());
      started.add(admin);

      ensureTopics(config);

      Map<String, Object> producerConfig =
          ProducerSettings.producerConfig(
              config.bootstrapServers(),
              config.ackTimeout(),
              config.producerMaxBlock(),
              config.producerLinger(),
              config.producerCompression(),
              config.maxBodyBytes(),
              "runlane-ingress");
      // The operator's client settings (security, ...); those runlane needs were refused at load.
      producerConfig.putAll(config.kafkaClient().forClients());
      KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig);
      started.add(0, () -> producer.close(Duration.ZERO));
      InputFollower input = followControl(config, producer, beforeControlRead);
      started.add(0, input);
      follower.set(input);
      WebhookPublisher publisher = new WebhookPublisher(producer, config.topics(), input);
      KafkaClientMetrics producerMetrics = new KafkaClientMetrics(producer);
      producerMetrics.bindTo(registry);
      started.add(0, producerMetrics);
      publisher.awaitMetadata(config.startupTimeout());

      Vertx vertx =
          Vertx.vertx(
              new VertxOptions()
                  .setEventLoopPoolSize(config.eventLoops())
                  .setWorkerPoolSize(2)
                  .setInternalBlockingPoolSize(2)
                  .setPreferNativeTransport(false));
      started.add(0, () -> vertx.close().await(5, TimeUnit.SECONDS));
      IngressMeters meters = new IngressMeters(registry);
      meters.controlViewAge(input::viewAge);
      ResponseWriter responses = new ResponseWriter(config.retryAfter());
      Routes routes = new Routes(responses);
      EnvelopeParser parser = EnvelopeParser.withDefaults();
      Clock clock = Clock.systemUTC();
      for (WebhookSource source : sources(config, clock)) {
        routes.post(
            source.path(),
            new WebhookHandler(
                source,
                parser,
                publisher,
                responses,
                meters,
                vertx,
                config.maxBodyBytes(),
                config.ackTimeout(),
                clock));
      }
      IngressServer server =
          IngressServer.start(
              vertx, config.host(), config.port(), config.eventLoops(), routes, registry);

      ready.set(true);
      log.info(
          "ingress ready: webhooks on port {} ({}), admin on port {}, topic {}",
          server.port(),
          String.join(", ", routes.paths()),
          admin.port(),
          input.topic());
      return new IngressApp(config, ready, admin, input, publisher, producerMetrics, vertx, server);
    } catch (RuntimeException | Error e) {
      for (AutoCloseable c : started) {
        try {
          c.close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** The webhook port (the actual one when configured as 0). */
  public int port() {
    return server.port();
  }

  /** The admin port (the actual one when configured as 0). */
  public int adminPort() {
    return admin.port();
  }

  /** Whether {@code /health/ready} answers 200: started, not stopping, and Kafka reachable. */
  public boolean isReady() {
    return ready.get() && input.kafkaReachable();
  }

  /**
   * Graceful stop: not ready, stop accepting, in-flight requests finish with their true answer
   * (within {@code INGRESS_SHUTDOWN_GRACE_MS}), flush and close the producer, stop Vert.x and the
   * admin server. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    long started = System.nanoTime();
    ready.set(false);
    log.info("ingress shutting down");
    boolean clean = server.shutdown(config.shutdownGrace());
    input.close();
    try {
      publisher.close(PRODUCER_CLOSE_TIMEOUT);
    } catch (RuntimeException e) {
      clean = false;
      log.warn("producer did not close cleanly", e);
    }
    producerMetrics.close();
    try {
      vertx.close().await(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.debug("vert.x did not close in time", e);
    }
    admin.close();
    log.info(
        "ingress stopped {}in {} ms",
        clean ? "" : "(not all requests answered) ",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
  }

  /**
   * Starts following the control topic (D35, D71).
   *
   * @param beforeControlRead the fault hook (see {@link #start(IngressConfig,
   *     PrometheusMeterRegistry, Runnable)})
   */
  private static InputFollower followControl(
      IngressConfig config, KafkaProducer<byte[], byte[]> producer, Runnable beforeControlRead) {
    InputFollower input =
        InputFollower.start(
            new InputFollower.Settings(
                config.kafkaClient().withBootstrap(config.bootstrapServers()),
                config.controlTopic(),
                config.topics().webhooks(),
                config.controlStaleAfter(),
                ProducerSettings.deliveryTimeout(config.ackTimeout()),
                config.startupTimeout(),
                beforeControlRead),
            producer);
    return input;
  }

  private static List<WebhookSource> sources(IngressConfig config, Clock clock) {
    List<WebhookSource> sources = new ArrayList<>();
    sources.add(
        WebhookSource.of(
            SumeSignatureVerifier.SCHEME,
            new SumeSignatureVerifier(config.sumeSecrets(), config.timestampTolerance(), clock)));
    if (!config.standardWebhooksSecrets().isEmpty()) {
      sources.add(
          WebhookSource.of(
              "standard",
              new StandardWebhooksVerifier(
                  config.standardWebhooksSecrets(), config.timestampTolerance(), clock)));
    }
    return sources;
  }

  private static void ensureTopics(IngressConfig config) {
    int maxMessageBytes = TopicEnsurer.maxMessageBytes(config.maxBodyBytes());
    List<NewTopic> topics =
        List.of(
            TopicEnsurer.sized(
                config
                    .topicPolicy()
                    .apply(
                        TopicEnsurer.plain(config.topics().webhooks(), config.topicSettings()),
                        TopicPolicy.Role.WEBHOOKS),
                maxMessageBytes),
            TopicEnsurer.sized(
                config
                    .topicPolicy()
                    .apply(
                        TopicEnsurer.plain(config.topics().dlq(), config.topicSettings()),
                        TopicPolicy.Role.DLQ),
                maxMessageBytes),
            config
                .topicPolicy()
                .apply(
                    ControlTopic.newTopic(config.controlTopic(), config.topicSettings()),
                    TopicPolicy.Role.OTHER),
            config
                .topicPolicy()
                .apply(
                    IngressAck.newTopic(config.controlTopic(), config.topicSettings()),
                    TopicPolicy.Role.OTHER));
    int timeoutMs = (int) Math.min(Integer.MAX_VALUE, config.startupTimeout().toMillis());
    Map<String, Object> adminConfig = config.kafkaClient().withBootstrap(config.bootstrapServers());
    adminConfig.put(
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
        Math.max(timeoutMs, ADMIN_REQUEST_TIMEOUT_MS));
    adminConfig.put(
        AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(timeoutMs, ADMIN_REQUEST_TIMEOUT_MS));
    adminConfig.put(AdminClientConfig.CLIENT_ID_CONFIG, "runlane-ingress-admin");
    try (Admin admin = Admin.create(adminConfig)) {
      TopicEnsurer.ensure(admin, topics, config.startupTimeout());
      config
          .topicPolicy()
          .weaker(
              admin,
              Map.of(
                  config.topics().webhooks(), TopicPolicy.Role.WEBHOOKS,
                  config.topics().dlq(), TopicPolicy.Role.DLQ),
              config.topicSettings().replicationFactor(),
              config.bootstrapServers())
          .forEach(w -> log.warn("topic settings: {}", w));
    }
  }
}
