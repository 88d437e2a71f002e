package dev.runlane.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The DLQ as an operator works it: an event dead-lettered for a reason since fixed (the processor's
 * body limit, raised) is re-driven and applied once; re-driving it again changes nothing; a body
 * that still cannot be decoded is skipped and counted.
 */
@RealInfra
class DlqRedriveIT {

  @Test
  void aFixedDeadLetterIsAppliedOnceAndReDrivingItAgainChangesNothing(Infra infra)
      throws Exception {
    try (Deployment d =
        new Deployment(infra, "dlq", 3, 1)
            .with("PROCESSOR_MAX_BODY_BYTES", "1024")
            .startIngress()
            .startProcessors()) {
      String big = "req-big-" + System.nanoTime();
      String broken = "req-broken-" + System.nanoTime();
      try (KafkaProducer<String, byte[]> producer = producer(infra)) {
        producer
            .send(record(d, "run-dlq", big, body(big, "run-dlq", "x".repeat(4000))))
            .get(30, TimeUnit.SECONDS);
        // Signed but without a created_at: the processor dead-letters it with its reason.
        producer
            .send(
                record(
                    d,
                    "run-dlq",
                    broken,
                    ("{\"request_id\":\"" + broken + "\",\"data\":{\"run_id\":\"run-dlq\"}}")
                        .getBytes(StandardCharsets.UTF_8)))
            .get(30, TimeUnit.SECONDS);
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Topics.readAll(infra.bootstrapServers(), d.topics.dlq()).size() == 2);

      Deployment.ToolRun list = d.tool("dlq", "list");
      assertThat(list.code()).isZero();
      assertThat(list.out()).contains("2 records").containsPattern("too_large\\s+1");
      ConsumerRecord<String, byte[]> tooLarge =
          Topics.readAll(infra.bootstrapServers(), d.topics.dlq()).stream()
              .filter(r -> "too_large".equals(RecordHeaders.get(r.headers(), "dlq.reason")))
              .findFirst()
              .orElseThrow();
      Deployment.ToolRun show =
          d.tool(
              "dlq", "show", d.topics.dlq() + "/" + tooLarge.partition() + "/" + tooLarge.offset());
      assertThat(show.out()).contains("header dlq.reason: too_large", "header dlq.source: ");

      // The fix: a processor limit as large as the ingress's.
      d.with("PROCESSOR_MAX_BODY_BYTES", "1048576").restartProcessors();
      d.awaitProcessorsRunning(Duration.ofSeconds(60));
      Deployment.ToolRun redrive = d.tool("dlq", "redrive", "--reason", "too_large");
      assertThat(redrive.code()).as(redrive.err()).isZero();
      assertThat(redrive.out()).contains("1 re-driven");
      await().atMost(Duration.ofSeconds(60)).until(() -> applied(infra, d, big) == 1);

      Deployment.ToolRun again = d.tool("dlq", "redrive", "--reason", "too_large");
      Deployment.ToolRun stillBroken = d.tool("dlq", "redrive", "--reason", "missing_field");
      assertThat(again.code()).isZero();
      assertThat(stillBroken.out()).contains("0 re-driven", "still not decodable: missing_field");
      // The second copy is decided (a duplicate) before a later event of the run is: wait for one.
      try (KafkaProducer<String, byte[]> producer = producer(infra)) {
        String later = "req-later-" + System.nanoTime();
        producer
            .send(record(d, "run-dlq", later, body(later, "run-dlq", "")))
            .get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(60)).until(() -> applied(infra, d, later) == 1);
      }
      assertThat(applied(infra, d, big)).as("applied once, re-driven twice").isEqualTo(1);
      assertThat(d.count("runlane.processor.events", "outcome", "duplicate")).isPositive();

      // A copy of that id on another run is dead-lettered request_id_reused (D41); re-driving it
      // would apply it to the second run once the first run's marker expired: refused.
      try (KafkaProducer<String, byte[]> producer = producer(infra)) {
        producer
            .send(record(d, "run-dlq-2", big, body(big, "run-dlq-2", "")))
            .get(30, TimeUnit.SECONDS);
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Topics.readAll(infra.bootstrapServers(), d.topics.dlq()).size() == 3);
      Deployment.ToolRun reused = d.tool("dlq", "redrive", "--reason", "request_id_reused");
      assertThat(reused.code()).as(reused.out()).isNotZero();
      assertThat(reused.err()).contains("1 of the chosen records are request_id_reused", "--force");
      Deployment.ToolRun dryRun =
          d.tool("dlq", "redrive", "--reason", "request_id_reused", "--dry-run");
      assertThat(dryRun.code()).as(dryRun.err()).isZero();
      assertThat(dryRun.out()).contains("1 would be re-driven");
    }
  }

  private static long applied(Infra infra, Deployment d, String requestId) {
    return Topics.readAll(infra.bootstrapServers(), d.topics.events()).stream()
        .filter(r -> requestId.equals(RecordHeaders.get(r.headers(), RecordHeaders.REQUEST_ID)))
        .count();
  }

  private static byte[] body(String requestId, String runId, String padding) {
    return SumeEvents.event(runId, requestId, Instant.now())
        .type("run.updated")
        .data("padding", padding)
        .bytes();
  }

  /** A record as the ingress writes it, straight into the input. */
  private static ProducerRecord<String, byte[]> record(
      Deployment d, String runId, String requestId, byte[] body) {
    ProducerRecord<String, byte[]> r = new ProducerRecord<>(d.topics.webhooks(), runId, body);
    RecordHeaders.put(r.headers(), RecordHeaders.REQUEST_ID, requestId);
    RecordHeaders.put(
        r.headers(), RecordHeaders.RECEIVED_AT, Long.toString(System.currentTimeMillis()));
    return r;
  }

  private static KafkaProducer<String, byte[]> producer(Infra infra) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            infra.bootstrapServers(),
            ProducerConfig.ACKS_CONFIG,
            "all"),
        new StringSerializer(),
        new org.apache.kafka.common.serialization.ByteArraySerializer());
  }
}
