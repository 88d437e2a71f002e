package dev.runlane.ingress.publish;

import dev.runlane.common.generation.IngressAck;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes this ingress's {@link IngressAck} to {@code <TOPIC_CONTROL>.ingress}: at once when it
 * changes, else every {@link #EVERY}, so that a grow knows which ingresses to wait for (D71). Only
 * the follower thread calls it.
 */
final class IngressAnnouncer {
  private static final Logger log = LoggerFactory.getLogger(IngressAnnouncer.class);

  /** How often an unchanged acknowledgement is written again. */
  static final Duration EVERY = Duration.ofSeconds(5);

  private final Producer<byte[], byte[]> producer;
  private final String topic;
  private final byte[] key;
  private final String instance;
  private IngressAck last;
  private long lastSent;
  private volatile boolean failing;

  IngressAnnouncer(
      Producer<byte[], byte[]> producer, String controlTopic, String pipeline, String instance) {
    this.producer = producer;
    this.topic = IngressAck.topic(controlTopic);
    this.instance = instance;
    this.key = IngressAck.key(pipeline, instance).getBytes(StandardCharsets.UTF_8);
  }

  /** Ingress apps started in this process (one, but for tests and the one-JVM stack). */
  private static final AtomicInteger STARTED = new AtomicInteger();

  /**
   * The host name (the pod's in Kubernetes), the process id and the app's number in the process:
   * unique among live ingresses.
   */
  static String thisInstance() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = "unknown-host";
      }
    }
    return host
        + "/"
        + ManagementFactory.getRuntimeMXBean().getPid()
        + "-"
        + STARTED.incrementAndGet();
  }

  String instance() {
    return instance;
  }

  void announce(IngressAck ack) {
    long now = System.nanoTime();
    if (ack.equals(last) && now - lastSent < EVERY.toNanos()) {
      return;
    }
    last = ack;
    lastSent = now;
    producer.send(
        new ProducerRecord<>(topic, 0, key, ack.encode()),
        (metadata, error) -> {
          if (error == null) {
            if (failing) {
              log.info("ingress acknowledgements are written to {} again", topic);
            }
            failing = false;
          } else if (!failing) {
            failing = true;
            log.warn(
                "cannot write this ingress's acknowledgement to {}: a `partitions grow` will not"
                    + " wait for this ingress (grant it Write on that topic): {}",
                topic,
                error.toString());
          }
        });
  }

  /** A clean stop: the tombstone tells a grow not to wait for this ingress. */
  void withdraw(Duration timeout) {
    try {
      producer
          .send(new ProducerRecord<>(topic, 0, key, null))
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      log.info(
          "could not withdraw this ingress's acknowledgement from {} ({}): a grow waits for it"
              + " until its bound passes",
          topic,
          e.toString());
    }
  }
}
