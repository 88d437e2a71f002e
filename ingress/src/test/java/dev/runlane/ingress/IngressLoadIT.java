package dev.runlane.ingress;

import static dev.runlane.ingress.Fixtures.body;
import static dev.runlane.ingress.Fixtures.signed;

import dev.runlane.common.metrics.Metrics;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.ingress.publish.ProducerSettings;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A small load run on loopback, printing figures (no assertions on speed): accepted requests/s and
 * latency percentiles of signed 2 KB webhooks through the ingress, then the raw {@code
 * KafkaProducer} rate for the same records with the same settings. Off by default:
 *
 * <pre>./mvnw -B -pl ingress verify -Drunlane.load=true -Dit.test=IngressLoadIT</pre>
 */
@RealInfra
@EnabledIfSystemProperty(named = "runlane.load", matches = "true")
class IngressLoadIT {

  private static final Duration RUN = Duration.ofSeconds(10);
  private static final int CONCURRENCY = 64;
  private static final int BODY_BYTES = 2048;

  @Test
  void printLoadFigures(Infra infra) throws Exception {
    String prefix = infra.uniqueName("load");
    Map<String, String> env = Fixtures.env(infra.bootstrapServers(), prefix);
    env.put("TOPIC_PARTITIONS", "12");
    IngressConfig config = Fixtures.config(env);
    PrometheusMeterRegistry registry = Metrics.newRegistry("ingress");
    try (IngressApp app = IngressApp.start(config, registry)) {
      URI uri = Fixtures.sumeUri(app);
      HttpClient client = Fixtures.httpClient();
      run(client, uri, Duration.ofSeconds(2)); // warm-up
      Result http = run(client, uri, RUN);
      Result raw = rawProducer(config);
      System.out.printf(
          "LOAD ingress: %d accepted, %d other, %.0f req/s, p50 %.1f ms, p99 %.1f ms, max %.1f ms"
              + " (%d concurrent, %d B bodies, %s)%n",
          http.ok,
          http.other,
          http.ok / http.seconds,
          http.histogram.getValueAtPercentile(50) / 1000.0,
          http.histogram.getValueAtPercentile(99) / 1000.0,
          http.histogram.getMaxValue() / 1000.0,
          CONCURRENCY,
          BODY_BYTES,
          RUN);
      System.out.printf(
          "LOAD raw producer: %d acked, %.0f records/s, ack p50 %.1f ms, p99 %.1f ms%n",
          raw.ok,
          raw.ok / raw.seconds,
          raw.histogram.getValueAtPercentile(50) / 1000.0,
          raw.histogram.getValueAtPercentile(99) / 1000.0);
    } finally {
      registry.close();
    }
  }

  record Result(long ok, long other, double seconds, Histogram histogram) {}

  private static Result run(HttpClient client, URI uri, Duration duration) throws Exception {
    Semaphore permits = new Semaphore(CONCURRENCY);
    AtomicLong ok = new AtomicLong();
    AtomicLong other = new AtomicLong();
    ConcurrentHistogram micros = new ConcurrentHistogram(3);
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    long n = 0;
    while (System.nanoTime() < end) {
      permits.acquire();
      long sent = System.nanoTime();
      String id = "load-" + n++;
      client
          .sendAsync(
              signed(uri, body(id, "run-" + (n % 1000), BODY_BYTES)),
              HttpResponse.BodyHandlers.discarding())
          .whenComplete(
              (r, e) -> {
                micros.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - sent));
                if (e == null && r.statusCode() == 200) {
                  ok.incrementAndGet();
                } else {
                  other.incrementAndGet();
                }
                permits.release();
              });
    }
    permits.acquire(CONCURRENCY);
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Result(ok.get(), other.get(), seconds, micros);
  }

  private static Result rawProducer(IngressConfig config) throws Exception {
    Map<String, Object> settings =
        ProducerSettings.producerConfig(
            config.bootstrapServers(),
            config.ackTimeout(),
            Duration.ofSeconds(5), // may block: this measures the producer alone
            config.producerLinger(),
            config.producerCompression(),
            config.maxBodyBytes(),
            "load-raw");
    AtomicLong ok = new AtomicLong();
    AtomicLong other = new AtomicLong();
    ConcurrentHistogram micros = new ConcurrentHistogram(3);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(settings)) {
      long start = System.nanoTime();
      long end = start + RUN.toNanos();
      long n = 0;
      while (System.nanoTime() < end) {
        String id = "raw-" + n++;
        byte[] value = body(id, "run-" + (n % 1000), BODY_BYTES);
        long sent = System.nanoTime();
        producer.send(
            new ProducerRecord<>(
                config.topics().webhooks(),
                ("run-" + (n % 1000)).getBytes(StandardCharsets.UTF_8),
                value),
            (m, e) -> {
              micros.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - sent));
              (e == null ? ok : other).incrementAndGet();
            });
      }
      producer.flush();
      double seconds = (System.nanoTime() - start) / 1e9;
      return new Result(ok.get(), other.get(), seconds, micros);
    }
  }
}
