package dev.runlane.ingress;

import dev.runlane.common.config.Secret;
import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.signature.SumeSignatureVerifier;
import dev.runlane.embedded.TopicReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Test helpers: signed Sume requests, envelope bodies, reading a topic to its end. */
public final class Fixtures {

  public static final Secret SECRET = Secret.of("whsec-test-newest-0123456789");
  public static final Secret OLD_SECRET = Secret.of("whsec-test-older-9876543210");

  private Fixtures() {}

  /** The env of an ingress on {@code bootstrap} with topics named after {@code prefix}. */
  public static Map<String, String> env(String bootstrap, String prefix) {
    Map<String, String> env = new HashMap<>();
    env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
    env.put("SUME_SIGNING_SECRETS", SECRET.reveal() + "," + OLD_SECRET.reveal());
    env.put("TOPIC_WEBHOOKS", prefix + ".webhooks");
    env.put("TOPIC_DLQ", prefix + ".webhooks.dlq");
    env.put("TOPIC_EVENTS", prefix + ".events");
    env.put("TOPIC_STALE", prefix + ".events.stale");
    env.put("TOPIC_RUNS", prefix + ".runs");
    env.put("TOPIC_PARTITIONS", "3");
    env.put("INGRESS_EVENT_LOOPS", "2");
    env.put("KAFKA_STARTUP_TIMEOUT_SECONDS", "30");
    return env;
  }

  public static IngressConfig config(Map<String, String> env) {
    return IngressConfig.fromEnv(env).withPorts(0, 0);
  }

  /** An envelope body with the given ids, created now, padded to about {@code size} bytes. */
  public static byte[] body(String requestId, String runId, int size) {
    return SumeEvents.event(runId, requestId, Instant.now())
        .type("run.completed")
        .paddedTo(size, "note")
        .bytes();
  }

  public static byte[] body(String requestId, String runId) {
    return body(requestId, runId, 0);
  }

  public static String newId(String prefix) {
    return prefix + "-" + UUID.randomUUID();
  }

  /** A POST signed with {@code secret} at {@code timestamp} (Unix seconds). */
  public static HttpRequest signed(URI uri, byte[] body, Secret secret, long timestamp) {
    return HttpRequest.newBuilder(uri)
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json; charset=utf-8")
        .header(SumeSignatureVerifier.EVENT_ID_HEADER, "evt-" + UUID.randomUUID())
        .header(SumeSignatureVerifier.TIMESTAMP_HEADER, Long.toString(timestamp))
        .header(
            SumeSignatureVerifier.SIGNATURE_HEADER,
            SumeSignatureVerifier.sign(secret, timestamp, body))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
        .build();
  }

  public static HttpRequest signed(URI uri, byte[] body) {
    return signed(uri, body, SECRET, Instant.now().getEpochSecond());
  }

  public static URI sumeUri(IngressApp app) {
    return URI.create("http://127.0.0.1:" + app.port() + "/webhooks/sume");
  }

  public static HttpClient httpClient() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  public static HttpResponse<String> send(HttpClient client, HttpRequest request) {
    try {
      return client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Every record of {@code topic}, from the beginning to the current end. */
  public static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic) {
    Map<String, Object> c = new HashMap<>();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4 * 1024 * 1024);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      return TopicReader.readAll(consumer, topic, Duration.ofSeconds(30));
    }
  }

  /** The request ids of every record of {@code topic}. */
  public static Set<String> requestIds(String bootstrap, String topic) {
    return readAll(bootstrap, topic).stream()
        .map(r -> header(r, dev.runlane.common.kafka.RecordHeaders.REQUEST_ID))
        .collect(Collectors.toSet());
  }

  /** What a load worker does again and again; {@code worker} is its number, from 0. */
  @FunctionalInterface
  public interface Step {
    void run(int worker) throws Exception;
  }

  /**
   * {@code threads} load workers, each repeating {@code step} while {@code going} holds; an
   * exception ends that worker. Shut the pool down and await it once {@code going} turns false.
   */
  public static ExecutorService repeat(int threads, BooleanSupplier going, Step step) {
    ExecutorService workers = Executors.newFixedThreadPool(threads);
    for (int w = 0; w < threads; w++) {
      int worker = w;
      workers.submit(
          () -> {
            while (going.getAsBoolean()) {
              step.run(worker);
            }
            return null;
          });
    }
    return workers;
  }

  public static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    return dev.runlane.common.kafka.RecordHeaders.get(r.headers(), name);
  }
}
