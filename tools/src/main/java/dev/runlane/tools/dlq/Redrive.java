package dev.runlane.tools.dlq;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.tools.Refused;
import dev.runlane.tools.generation.Pipeline;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * One re-drive's writing (D38): each chosen record's body (fetched back from where it stays when
 * the DLQ kept only its reference) is decoded again and written into the input, keyed by its run
 * id, with its provenance, at most a given number per second. What cannot be written is skipped and
 * counted by why; the writing stops once the pipeline moves to another input.
 */
final class Redrive {
  private final Pipeline pipeline;
  private final String input;
  private final boolean dryRun;
  private final long every;
  private final EnvelopeParser parser = EnvelopeParser.withDefaults();
  private final Map<String, Integer> skipped = new TreeMap<>();
  private long written;
  private long next;

  /**
   * @param input the input the ingress writes now
   * @param ratePerSecond at most this many records written a second
   * @param dryRun decode and count, write nothing
   */
  Redrive(Pipeline pipeline, String input, int ratePerSecond, boolean dryRun) {
    this.pipeline = pipeline;
    this.input = input;
    this.dryRun = dryRun;
    this.every = TimeUnit.SECONDS.toNanos(1) / ratePerSecond;
  }

  /**
   * Writes {@code chosen} in order.
   *
   * @return the records written (in a dry run, that would be)
   * @throws Refused if the pipeline moved to another input meanwhile
   * @throws KafkaException if a write failed or timed out, saying how many were written before
   */
  long write(List<ConsumerRecord<byte[], byte[]>> chosen) {
    Map<String, Object> p = new HashMap<>(pipeline.clientSettings());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    next = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (ConsumerRecord<byte[], byte[]> r : chosen) {
        write(producer, r);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new KafkaException("re-drive stopped after " + written + " records", e);
    }
    return written;
  }

  /** The records skipped, counted by why. */
  Map<String, Integer> skipped() {
    return skipped;
  }

  private void write(KafkaProducer<byte[], byte[]> producer, ConsumerRecord<byte[], byte[]> r)
      throws InterruptedException, ExecutionException, TimeoutException {
    String from = r.topic() + "/" + r.partition() + "/" + r.offset();
    byte[] body = body(r);
    if (body == null) {
      skipped.merge("body gone (no " + RecordHeaders.DLQ_SOURCE + " or deleted)", 1, Integer::sum);
      return;
    }
    Envelope envelope;
    try {
      envelope = parser.parse(body);
    } catch (EnvelopeException e) {
      skipped.merge("still not decodable: " + e.code(), 1, Integer::sum);
      return;
    }
    if (dryRun) {
      written++;
      return;
    }
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            input,
            null,
            System.currentTimeMillis(),
            envelope.runId().getBytes(StandardCharsets.UTF_8),
            body,
            provenance(r.headers(), envelope, from));
    if (written % 100 == 99 && !pipeline.latest().ingressInput().equals(input)) {
      throw new Refused(
          "the pipeline moved to another input after "
              + written
              + " records; re-run the same command: the re-driven ones are duplicates there");
    }
    LockSupport.parkNanos(next - System.nanoTime());
    next = Math.max(next, System.nanoTime()) + every;
    producer.send(record).get(30, TimeUnit.SECONDS);
    written++;
  }

  /** The record's body, else the one where {@code dlq.source} says it stays; null if gone. */
  private byte[] body(ConsumerRecord<byte[], byte[]> r) {
    if (r.value() != null) {
      return r.value();
    }
    String source = RecordHeaders.get(r.headers(), RecordHeaders.DLQ_SOURCE);
    return source == null ? null : fetch(DeadLetters.Coordinates.parse(source));
  }

  private byte[] fetch(DeadLetters.Coordinates at) {
    return DeadLetters.at(pipeline.clientSettings(), at.topic(), at.partition(), at.offset())
        .map(ConsumerRecord::value)
        .orElse(null);
  }

  /** The original headers less the DLQ's own, plus where the record comes from. */
  private static Headers provenance(Headers original, Envelope envelope, String from) {
    // Named in full: Kafka's RecordHeaders, where ours (the header names) is imported.
    Headers h = new org.apache.kafka.common.header.internals.RecordHeaders(original.toArray());
    h.remove(RecordHeaders.DLQ_REASON);
    h.remove(RecordHeaders.DLQ_DETAIL);
    h.remove(RecordHeaders.DLQ_SOURCE);
    RecordHeaders.put(h, RecordHeaders.REQUEST_ID, envelope.requestId());
    RecordHeaders.put(h, RecordHeaders.CREATED_AT, envelope.createdAt().toString());
    if (RecordHeaders.get(h, RecordHeaders.RECEIVED_AT) == null) {
      RecordHeaders.put(h, RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
    }
    RecordHeaders.put(h, RecordHeaders.REDRIVEN_FROM, from);
    return h;
  }
}
