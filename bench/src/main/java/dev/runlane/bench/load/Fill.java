package dev.runlane.bench.load;

import java.time.Instant;
import java.util.SplittableRandom;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A topic pre-filled with webhook records as the ingress writes them, for a stage that measures
 * what reads them. Event {@code n} has the request_id {@code UUID(h, n)} ({@code h} the first long
 * of {@code SplittableRandom(seed)}), the run {@code runPrefix + n % runs}, created_at {@code from
 * + n} ms, and a {@link #BODY_BYTES} body drawn from {@code SplittableRandom(n)}: the same seed
 * fills the same records in every run.
 *
 * @param duplicatePercent the share of sends that repeat an earlier event, request_id included
 */
public record Fill(long seed, Instant from, String runPrefix, int runs, int duplicatePercent) {
  /** The bodies' size: a few events of Sume's, not the ingress stage's 2 KB. */
  public static final int BODY_BYTES = 512;

  /** When the pre-filled events of the processor, rebuild and generations stages begin. */
  public static final Instant FROM = Instant.parse("2026-11-29T10:00:00Z");

  /** {@code runs} events, one per run ({@code <runPrefix>0} .. {@code <runPrefix>N-1}). */
  public static void onePerRun(String bootstrap, String topic, String runPrefix, int runs) {
    new Fill(61, FROM, runPrefix, runs, 0).write(bootstrap, topic, runs);
  }

  /** Writes {@code events} records to {@code topic}; returns how many request_ids are unique. */
  public int write(String bootstrap, String topic, int events) {
    SplittableRandom random = new SplittableRandom(seed);
    long idHigh = random.nextLong();
    int unique = 0;
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            KafkaClients.fill(bootstrap), new StringSerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < events; i++) {
        boolean duplicate = unique > 0 && random.nextInt(100) < duplicatePercent;
        int n = duplicate ? random.nextInt(unique) : unique++;
        producer.send(
            Webhooks.record(
                topic,
                new UUID(idHigh, n).toString(),
                runPrefix + (n % runs),
                from.plusMillis(n),
                BODY_BYTES,
                new SplittableRandom(n)));
      }
      producer.flush();
    }
    return unique;
  }
}
