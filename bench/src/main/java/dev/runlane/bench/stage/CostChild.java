package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.load.BareHarness;
import dev.runlane.embedded.EmbeddedKafka;
import dev.runlane.ingress.IngressConfig;
import dev.runlane.ingress.publish.ProducerSettings;
import dev.runlane.processor.ProcessorConfig;
import dev.runlane.processor.StreamsSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The cost stage's JVMs that are not runlane's services (D92): {@code broker READY_FILE} (the
 * embedded broker, alone, so that its CPU time is its own), {@code bare-ingress READY_FILE} and
 * {@code bare-streams READY_FILE} (the bare pipeline). Each writes its ready file when it serves,
 * and runs until SIGTERM. Configured by the same environment as the ingress and the processor, plus
 * {@link #BARE_INPUT} and {@link #BARE_OUTPUT}.
 */
public final class CostChild {
  /** The topic the bare ingress writes and the bare Streams application reads. */
  static final String BARE_INPUT = "BENCH_BARE_INPUT";

  /** The topic the bare Streams application copies every record to. */
  static final String BARE_OUTPUT = "BENCH_BARE_OUTPUT";

  private CostChild() {}

  public static void main(String[] args) throws Exception {
    Path ready = Path.of(args[1]);
    Map<String, String> env = System.getenv();
    AutoCloseable running =
        switch (args[0]) {
          case "broker" -> broker(ready, env);
          case "bare-ingress" -> bareIngress(ready, env);
          case "bare-streams" -> bareStreams(ready, env);
          default -> throw new IllegalArgumentException("unknown child: " + args[0]);
        };
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    running.close();
                  } catch (Exception e) {
                    e.printStackTrace();
                  } finally {
                    stopped.countDown();
                  }
                },
                "cost-child-shutdown"));
    stopped.await();
  }

  private static AutoCloseable broker(Path ready, Map<String, String> env) throws Exception {
    EmbeddedKafka kafka =
        EmbeddedKafka.start(
            BenchContext.brokerConfig(env.get(BenchContext.BROKER_CONFIG_VARIABLE)));
    signalReady(ready, kafka.bootstrapServers());
    return kafka;
  }

  /**
   * The ingress's HTTP server framework, loops and producer settings (the ingress's own code for
   * them), without verifying or parsing: {@link BareHarness}.
   */
  private static AutoCloseable bareIngress(Path ready, Map<String, String> env) throws Exception {
    IngressConfig config = IngressConfig.fromEnv(env);
    Map<String, Object> producer =
        ProducerSettings.producerConfig(
            config.bootstrapServers(),
            config.ackTimeout(),
            config.producerMaxBlock(),
            config.producerLinger(),
            config.producerCompression(),
            config.maxBodyBytes(),
            "bench-cost-bare");
    BareHarness bare =
        new BareHarness(producer, env.get(BARE_INPUT), config.eventLoops(), config.port());
    signalReady(ready, Integer.toString(bare.port()));
    return bare;
  }

  /**
   * A Kafka Streams application with the processor's client settings (its own code for them:
   * exactly-once v2, threads, commit interval, fetch, linger, compression) that copies each record,
   * headers and all, to the output topic.
   */
  private static AutoCloseable bareStreams(Path ready, Map<String, String> env) throws Exception {
    ProcessorConfig config = ProcessorConfig.fromEnv(env);
    Properties props =
        StreamsSettings.of(
            config, new HostInfo("127.0.0.1", config.port()), config.applicationId());
    props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(env.get(BARE_INPUT), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
        .to(env.get(BARE_OUTPUT), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    streams.start();
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (streams.state() != KafkaStreams.State.RUNNING) {
      if (System.nanoTime() > deadline || !streams.state().isRunningOrRebalancing()) {
        streams.close();
        throw new IllegalStateException("bare Streams application not RUNNING: " + streams.state());
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
    signalReady(
        ready,
        String.format(
            "%s, %d threads, commit interval %d ms",
            props.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG),
            config.streamThreads(),
            config.commitInterval().toMillis()));
    return streams::close;
  }

  /** Writes {@code content} to {@code ready} at once (a temporary file moved into place). */
  private static void signalReady(Path ready, String content) throws Exception {
    Path tmp = ready.resolveSibling(ready.getFileName() + ".partial");
    Files.writeString(tmp, content, StandardCharsets.UTF_8);
    Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
  }
}
