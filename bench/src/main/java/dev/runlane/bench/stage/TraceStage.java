package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.load.KafkaClients;
import dev.runlane.bench.report.Row;
import dev.runlane.common.decision.Decision;
import dev.runlane.tools.ToolsMain;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * {@code runlane trace --run R} on a decision log of 10 million decisions over the bench's 12
 * partitions (D87): the command reads the run's one partition, so the stage fills that partition
 * alone with its share (10M / 12), the run's decisions spread through it, and times the whole
 * command as an operator runs it (the control topic, the partition read, the undecided tail, the
 * processor and Redis asked; neither runs here, so each answers at once that it cannot).
 */
public final class TraceStage extends Stage {
  static final String STAGE = "trace";

  /** The log's size the target names. */
  static final long LOG_DECISIONS = 10_000_000;

  /** One decision of the traced run in this many. */
  private static final int EVERY = 10_000;

  public TraceStage() {
    super(STAGE);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    String log = "bench.trace.decisions";
    String input = "bench.trace.webhooks";
    ctx.createTopics(log, input);
    String run = "run-traced";
    int partition =
        Utils.toPositive(Utils.murmur2(run.getBytes(StandardCharsets.UTF_8)))
            % BenchContext.PARTITIONS;
    long records = LOG_DECISIONS / BenchContext.PARTITIONS;
    long t0 = System.nanoTime();
    long traced = fill(ctx.bootstrap(), log, input, partition, run, records);
    double fillSeconds = (System.nanoTime() - t0) / 1e9;
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", ctx.bootstrap());
    env.put("TOPIC_DECISIONS", log);
    env.put("TOPIC_WEBHOOKS", input);
    env.put("TOPIC_CONTROL", "bench.trace.control");
    env.put("PROCESSOR_URL", "http://127.0.0.1:1");
    env.put("REDIS_URL", ctx.redis().uri().toString());
    double first = trace(env, run, traced);
    double second = trace(env, run, traced);
    ctx.results.add(
        Row.figure(
                STAGE,
                "runlane trace --run R, 10M-decision log (its partition's "
                    + String.format("%,d", records)
                    + " records; second of two runs)",
                second,
                "s")
            .withTarget("<= 3 s", second <= 3));
    ctx.results.note(
        STAGE,
        String.format(
            "filled %,d decisions (%,d of the traced run) into partition %d in %.1f s; the"
                + " first trace took %.2f s, the second %.2f s",
            records, traced, partition, fillSeconds, first, second));
  }

  private static long fill(
      String bootstrap, String log, String input, int partition, String run, long records) {
    long traced = 0;
    try (KafkaProducer<String, byte[]> p =
        new KafkaProducer<>(
            KafkaClients.fill(bootstrap), new StringSerializer(), new ByteArraySerializer())) {
      for (long i = 0; i < records; i++) {
        boolean ours = i % EVERY == 0;
        String key = ours ? run : "run-" + (i % 100_000);
        Decision d =
            new Decision(
                UUID.randomUUID().toString(),
                key,
                input,
                partition,
                i,
                0,
                null,
                i % 3 == 0 ? Decision.Outcome.DUPLICATE : Decision.Outcome.APPLIED,
                "store",
                null,
                "sume.events",
                System.currentTimeMillis(),
                System.currentTimeMillis());
        p.send(new ProducerRecord<>(log, partition, key, d.toBytes()));
        traced += ours ? 1 : 0;
      }
    }
    return traced;
  }

  /** The command's wall time, in seconds; it must find every decision of the run. */
  private static double trace(Map<String, String> env, String run, long traced) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long t0 = System.nanoTime();
    int code =
        ToolsMain.run(
            env,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            "trace",
            "--run",
            run);
    double seconds = (System.nanoTime() - t0) / 1e9;
    String text = out.toString(StandardCharsets.UTF_8);
    if (code != 0 || !text.contains(": " + traced + " decisions")) {
      throw new IllegalStateException("trace did not find the run's " + traced + ": " + text);
    }
    System.out.printf("  trace --run %s: %.2f s%n", run, seconds);
    return seconds;
  }
}
