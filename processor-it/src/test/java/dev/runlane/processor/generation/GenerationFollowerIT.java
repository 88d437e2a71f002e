package dev.runlane.processor.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.generation.ControlTopic;
import dev.runlane.common.generation.Generation;
import dev.runlane.common.generation.Generation.Kind;
import dev.runlane.common.generation.Generation.State;
import dev.runlane.common.kafka.TopicSettings;
import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The follower on a real control topic, with a Streams stand-in whose close the test holds: what it
 * does when the control topic moves on while it closes the generation it ran.
 */
@RealInfra
class GenerationFollowerIT {

  /** How the test declares generation 1 stopped while the follower closes generation 0. */
  private interface Declare {
    void stopped(Generation g2, String control, ControlTopic.Writer writer, HeldClose streams)
        throws Exception;
  }

  @Test
  void aSwapReReadsTheControlTopicAfterALongCloseAndNeverJoinsAGenerationDeclaredStopped(
      Infra infra) throws Exception {
    acrossALongClose(
        infra,
        "follower",
        (g2, control, writer, streams) -> {
          writer.write(g2);
          streams.release.countDown();
        });
  }

  /**
   * The broker answers a transaction's commit before it writes the commit's markers: until then a
   * read-committed reader's end (the last stable offset) stands before the record just committed.
   * Held here by a transaction the test keeps open: the follower waits for it rather than take what
   * it read for the end (design.md §8).
   */
  @Test
  void aStopDeclaredInATransactionStillEndingIsWaitedFor(Infra infra) throws Exception {
    acrossALongClose(
        infra,
        "follower-open",
        (g2, control, writer, streams) -> {
          Map<String, Object> settings = new HashMap<>(client(infra));
          settings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "test-" + g2.applicationId());
          try (KafkaProducer<String, byte[]> p =
              new KafkaProducer<>(settings, new StringSerializer(), new ByteArraySerializer())) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(control, 0, g2.input(), ControlTopic.encode(g2)))
                .get(30, TimeUnit.SECONDS);
            streams.release.countDown();
            await("the follower starts nothing while the stop's transaction is still ending")
                .during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(10))
                .until(() -> streams.started.size() == 1);
            p.commitTransaction();
          }
        });
  }

  private static Map<String, Object> client(Infra infra) {
    return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers());
  }

  private void acrossALongClose(Infra infra, String prefix, Declare declare) throws Exception {
    String name = infra.uniqueName(prefix);
    String input = name + ".webhooks";
    String control = name + ".control";
    String appId = name + "-processor";
    Map<String, Object> client = client(infra);
    try (Admin admin = Admin.create(client);
        ControlTopic.Writer writer = new ControlTopic.Writer(client, control, input);
        ControlTopic.Reader reader = new ControlTopic.Reader(client, control, input)) {
      admin.createTopics(List.of(new NewTopic(input, 2, (short) 1))).all().get();
      ControlTopic.ensure(admin, control, new TopicSettings(1, (short) 1));
      HeldClose streams = new HeldClose();
      GenerationFollower follower =
          new GenerationFollower(
              reader,
              admin,
              appId,
              input,
              control,
              streams,
              new RetiredInputWatch(admin, Metrics.newRegistry("processor")),
              reason -> {},
              () -> false);
      try {
        follower.start();
        Generation g0 = Generation.initial(appId, input);
        assertThat(streams.started).containsExactly(g0.applicationId());

        // A rebuild becomes active: the follower closes generation 0, and the close takes long.
        Generation g1 = rebuild(1, appId, input, State.ACTIVE, g0);
        writer.write(g1);
        assertThat(streams.closing.await(30, TimeUnit.SECONDS)).isTrue();
        // Meanwhile the operator starts another replay: generation 1 is to stop.
        Generation g2 = rebuild(2, appId, input, State.PREPARING, g1);
        declare.stopped(g2, control, writer, streams);

        await().atMost(Duration.ofSeconds(30)).until(() -> streams.preparing.contains(2));
        assertThat(streams.started)
            .as("generation 1 was declared stopped while generation 0 closed")
            .containsExactly(g0.applicationId());
      } finally {
        streams.release.countDown();
        follower.close();
      }
    }
  }

  private static Generation rebuild(
      int number, String appId, String input, State state, Generation previous) {
    return new Generation(
        number,
        state,
        Kind.REBUILD,
        appId,
        Generation.applicationId(appId, number),
        input,
        2,
        null,
        null,
        Instant.now(),
        previous);
  }

  /** Records what the follower asks; its first stop waits for the test. */
  private static final class HeldClose implements GenerationFollower.Streams {
    final List<String> started = new CopyOnWriteArrayList<>();
    final List<Integer> preparing = new CopyOnWriteArrayList<>();
    final CountDownLatch closing = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private volatile Generation running;

    @Override
    public Generation running() {
      return running;
    }

    @Override
    public void start(Generation generation) {
      started.add(generation.applicationId());
      running = generation;
    }

    @Override
    public void stop() {
      closing.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      running = null;
    }

    @Override
    public void preparing(Generation latest) {
      preparing.add(latest.number());
    }
  }
}
