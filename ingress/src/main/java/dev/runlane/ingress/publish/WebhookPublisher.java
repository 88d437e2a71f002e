package dev.runlane.ingress.publish;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.common.kafka.TopicNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes webhooks to Kafka through the one shared producer of the process. Each write returns a
 * {@link CompletionStage} completed on the producer's I/O thread when the broker acknowledged it
 * (acks=all), or failed: {@code send()} never blocks longer than {@code max.block.ms}, and a send
 * that fails at once (buffer full, producer closed) fails the stage instead of throwing.
 */
public final class WebhookPublisher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(WebhookPublisher.class);

  private static final Duration RETRY_BACKOFF = Duration.ofMillis(100);

  private final Producer<byte[], byte[]> producer;
  private final TopicNames topics;
  private final InputLeases input;

  /** Writes webhooks to {@code topics.webhooks()}. */
  public WebhookPublisher(Producer<byte[], byte[]> producer, TopicNames topics) {
    this(producer, topics, InputLeases.fixed(topics.webhooks()));
  }

  /** Writes each webhook to the topic {@code input} names at the time (see InputFollower). */
  public WebhookPublisher(Producer<byte[], byte[]> producer, TopicNames topics, InputLeases input) {
    this.producer = producer;
    this.topics = topics;
    this.input = input;
  }

  /**
   * The webhook record: key = run id, value = the raw body, timestamp = receive time, headers =
   * request_id, created_at, received_at, source and the signature headers. Fails with {@link
   * ControlViewStale} when the ingress cannot tell which input is current (D71).
   */
  public CompletionStage<RecordMetadata> publish(Envelope envelope, Inbound inbound) {
    WriteTarget target;
    try {
      target = input.acquire();
    } catch (ControlViewStale e) {
      return CompletableFuture.failedStage(e);
    }
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            target.topic(),
            null,
            inbound.receivedAt().toEpochMilli(),
            envelope.runId().getBytes(StandardCharsets.UTF_8),
            envelope.raw());
    Headers h = record.headers();
    RecordHeaders.put(h, RecordHeaders.REQUEST_ID, envelope.requestId());
    RecordHeaders.put(h, RecordHeaders.CREATED_AT, envelope.createdAt().toString());
    putCommon(h, inbound);
    CompletionStage<RecordMetadata> acked = send(record);
    acked.whenComplete((metadata, error) -> target.release());
    return acked;
  }

  /**
   * A signed body that cannot be used: to the DLQ with no key, the raw body, {@code dlq.reason} and
   * {@code dlq.detail} besides the common headers.
   */
  public CompletionStage<RecordMetadata> deadLetter(
      byte[] raw, String reason, String detail, Inbound inbound) {
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(topics.dlq(), null, inbound.receivedAt().toEpochMilli(), null, raw);
    Headers h = record.headers();
    RecordHeaders.put(h, RecordHeaders.DLQ_REASON, reason);
    RecordHeaders.put(h, RecordHeaders.DLQ_DETAIL, detail);
    putCommon(h, inbound);
    return send(record);
  }

  /** The one wrapper of {@code send}: the broker ack as a stage; never throws. */
  public CompletionStage<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
    CompletableFuture<RecordMetadata> acked = new CompletableFuture<>();
    try {
      producer.send(
          record,
          (metadata, error) -> {
            if (error == null) {
              acked.complete(metadata);
            } else {
              acked.completeExceptionally(error);
            }
          });
    } catch (KafkaException | IllegalStateException e) {
      acked.completeExceptionally(e);
    }
    return acked;
  }

  /**
   * Fetches the metadata of the topics written to, retrying until {@code timeout}: afterwards
   * {@code send()} does not wait for metadata. Call before accepting requests.
   *
   * @throws TimeoutException if the brokers did not answer in time
   */
  public void awaitMetadata(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    WriteTarget target = input.acquire();
    target.release();
    for (String topic : List.of(target.topic(), topics.dlq())) {
      while (true) {
        long attempt = System.nanoTime();
        try {
          producer.partitionsFor(topic); // waits up to max.block.ms
          break;
        } catch (TimeoutException e) {
          if (System.nanoTime() - deadline > 0) {
            throw new TimeoutException(
                "no metadata for topic " + topic + " within " + timeout + ": is Kafka reachable?",
                e);
          }
          log.debug("waiting for metadata of {}", topic);
          pauseUntil(attempt + RETRY_BACKOFF.toNanos());
        }
      }
    }
  }

  /** Whether the producer has {@code topic}'s metadata (asking for it waits max.block.ms). */
  public static boolean hasMetadata(Producer<?, ?> producer, String topic) {
    try {
      return !producer.partitionsFor(topic).isEmpty();
    } catch (TimeoutException e) {
      return false;
    }
  }

  /** Sends what is buffered and closes the producer, waiting up to {@code timeout}. */
  public void close(Duration timeout) {
    try {
      producer.flush();
    } finally {
      producer.close(timeout);
    }
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  /** A small backoff between metadata attempts (max.block.ms may be 0). */
  private static void pauseUntil(long nanoTime) {
    long wait = nanoTime - System.nanoTime();
    if (wait > 0) {
      LockSupport.parkNanos(wait);
    }
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptException("interrupted waiting for Kafka");
    }
  }

  private static void putCommon(Headers h, Inbound inbound) {
    RecordHeaders.put(
        h, RecordHeaders.RECEIVED_AT, Long.toString(inbound.receivedAt().toEpochMilli()));
    RecordHeaders.put(h, RecordHeaders.SOURCE, inbound.source());
    inbound
        .signatureHeaders()
        .forEach((name, value) -> h.add(RecordHeaders.http(name), utf8(value)));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
