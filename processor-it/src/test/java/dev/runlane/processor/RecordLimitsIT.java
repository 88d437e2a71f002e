package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

/**
 * Records only a direct producer can write (the ingress never does): headers too large to copy into
 * a dead letter, and a key that is not UTF-8. Each is dead-lettered and the processor goes on;
 * before, the first failed the producer and so the stream thread, for ever.
 */
@RealInfra
class RecordLimitsIT {
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void oversizedHeadersAndNonUtf8KeysAreDeadLetteredAndProcessingGoesOn(Infra infra)
      throws Exception {
    try (KafkaProducer<byte[], byte[]> raw = rawProducer(infra);
        ProcessorHarness h = ProcessorHarness.unique(infra, "limits");
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader dlq = h.new Reader(h.topics.dlq())) {
      h.start();
      byte[] body = ProcessorHarness.event("run-h", "fat-headers", T0, "run.updated");
      ProducerRecord<byte[], byte[]> fat =
          new ProducerRecord<>(h.topics.webhooks(), "run-h".getBytes(StandardCharsets.UTF_8), body);
      fat.headers().add("request_id", "fat-headers".getBytes(StandardCharsets.UTF_8));
      fat.headers().add("padding", new byte[60 * 1024]); // fits the input, not a dead letter
      raw.send(fat).get();
      // Not UTF-8: Kafka's string decoding would read it as the run id "r\uFFFD\uFFFD".
      byte[] badKey = {'r', (byte) 0xFF, (byte) 0xFE};
      ProducerRecord<byte[], byte[]> bad =
          new ProducerRecord<>(
              h.topics.webhooks(),
              badKey,
              ProcessorHarness.event("r\uFFFD\uFFFD", "bad-key", T0, "run.updated"));
      bad.headers().add("request_id", "bad-key".getBytes(StandardCharsets.UTF_8));
      raw.send(bad).get();
      h.send("run-h", "after", T0.plusSeconds(1));

      await().atMost(Duration.ofSeconds(60)).until(() -> dlq.poll().size() == 2);
      await().atMost(Duration.ofSeconds(60)).until(() -> events.poll().size() == 1);
      assertThat(events.requestIds()).containsExactly("after");
      ConsumerRecord<String, byte[]> first = dlq.records.get(0);
      ConsumerRecord<String, byte[]> second = dlq.records.get(1);
      ConsumerRecord<String, byte[]> fatLetter =
          "too_large".equals(ProcessorHarness.header(first, RecordHeaders.DLQ_REASON))
              ? first
              : second;
      ConsumerRecord<String, byte[]> keyLetter = fatLetter == first ? second : first;
      assertThat(fatLetter.value()).as("a reference, not the record").isNull();
      assertThat(fatLetter.headers().lastHeader("padding")).isNull();
      assertThat(ProcessorHarness.header(fatLetter, RecordHeaders.DLQ_DETAIL))
          .contains("bytes of headers");
      assertThat(ProcessorHarness.header(fatLetter, RecordHeaders.DLQ_SOURCE))
          .startsWith(h.topics.webhooks());
      assertThat(ProcessorHarness.header(keyLetter, RecordHeaders.DLQ_REASON))
          .isEqualTo("key_mismatch");
      assertThat(ProcessorHarness.header(keyLetter, RecordHeaders.DLQ_DETAIL))
          .contains("not UTF-8");
      assertThat(h.app.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);
      assertThat(h.app.fatal()).isNull();
    }
  }

  /** A producer that writes keys and headers as given, as only a direct producer can. */
  private static KafkaProducer<byte[], byte[]> rawProducer(Infra infra) {
    return new KafkaProducer<>(
        Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }
}
