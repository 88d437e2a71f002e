package dev.runlane.tools.generation;

import dev.runlane.common.generation.IngressAck;
import dev.runlane.tools.Steps;
import dev.runlane.tools.TimedOut;
import dev.runlane.tools.kafka.Cluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Waits until every ingress that may still write acknowledges a grow's new input (D71): each live
 * ingress writes an {@link IngressAck} to {@code <TOPIC_CONTROL>.ingress} when it moves and every
 * few seconds. An ingress is waited for while it was heard from within its own "gone" bound (its
 * stale bound plus its producer's delivery timeout): one silent for longer answers 503 instead of
 * writing, and none of its writes can still land.
 */
final class IngressAcks implements AutoCloseable {
  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

  private final Cluster cluster;
  private final Steps steps;
  private final String topic;
  private final String prefix;
  private final KafkaConsumer<String, byte[]> consumer;
  private final TopicPartition partition;
  private final KafkaProducer<String, byte[]> probe;
  private final String probeKey;
  private final Map<String, Heard> latest = new TreeMap<>();

  /** An acknowledgement and when the broker appended it. */
  private record Heard(IngressAck ack, Instant at) {}

  IngressAcks(Pipeline pipeline, Steps steps) {
    this.cluster = pipeline.cluster();
    this.steps = steps;
    this.topic = IngressAck.topic(pipeline.config().controlTopic());
    this.prefix = IngressAck.key(pipeline.config().pipeline(), "");
    Map<String, Object> c = new HashMap<>(pipeline.clientSettings());
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.remove(ConsumerConfig.GROUP_ID_CONFIG);
    this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
    this.partition = new TopicPartition(topic, 0);
    this.probeKey = IngressAck.key(pipeline.config().pipeline(), "~tool");
    Map<String, Object> p = new HashMap<>(pipeline.clientSettings());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    this.probe = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  /**
   * @return how many ingresses of this pipeline were heard from (0: none writes acknowledgements)
   * @throws TimedOut naming the ingresses that did not acknowledge within {@code timeout}
   */
  int await(int generation, String input, Duration timeout) {
    if (cluster.partitions(topic).isEmpty()) {
      // Only ingresses older than D71 run (or none): no topic, nobody to wait for.
      steps.done(
          "no ingress acknowledges its input in "
              + topic
              + " (none runs, or they predate it): the old input must be quiet instead");
      return 0;
    }
    consumer.assign(List.of(partition));
    consumer.seekToBeginning(List.of(partition));
    long deadline = System.nanoTime() + timeout.toNanos();
    Set<String> shown = Set.of();
    long nextProgress = System.nanoTime();
    while (true) {
      readToEnd();
      Map<String, String> waiting = waitingFor(generation, input);
      if (waiting.isEmpty()) {
        steps.done(acknowledged(generation, input));
        return latest.size();
      }
      // Named when the set changes and every few seconds, not on every poll.
      if (!waiting.keySet().equals(shown) || System.nanoTime() - nextProgress > 0) {
        waiting.values().forEach(w -> steps.detail("waiting for ingress " + w));
        shown = Set.copyOf(waiting.keySet());
        nextProgress = System.nanoTime() + PROGRESS_EVERY.toNanos();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new TimedOut(
            "these ingresses did not acknowledge "
                + input
                + " within "
                + Steps.format(timeout)
                + ": "
                + String.join("; ", waiting.values())
                + ". Each stops writing once its view of the control topic is older than its"
                + " bound; re-run this command to resume");
      }
      LockSupport.parkNanos(POLL.toNanos());
    }
  }

  /**
   * The broker's time: the append time of a probe record, so that "heard within its bound" compares
   * two times of one clock, whatever the tool's host clock says (D71).
   */
  private Instant brokerNow() {
    try {
      long at =
          probe
              .send(new ProducerRecord<>(topic, 0, probeKey, new byte[0]))
              .get(30, TimeUnit.SECONDS)
              .timestamp();
      return Instant.ofEpochMilli(at);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new KafkaException("could not write to " + topic + " to learn the broker's time", e);
    }
  }

  private void readToEnd() {
    long end = consumer.endOffsets(List.of(partition), Duration.ofSeconds(30)).get(partition);
    while (consumer.position(partition, Duration.ofSeconds(30)) < end) {
      for (ConsumerRecord<String, byte[]> r : consumer.poll(POLL)) {
        if (r.key() == null || !r.key().startsWith(prefix) || r.key().equals(probeKey)) {
          continue;
        }
        if (r.value() == null) {
          latest.remove(r.key());
          continue;
        }
        try {
          latest.put(
              r.key(),
              new Heard(IngressAck.decode(r.value()), Instant.ofEpochMilli(r.timestamp())));
        } catch (IllegalArgumentException e) {
          steps.detail(
              "ignored an unreadable acknowledgement under "
                  + r.key()
                  + ": "
                  + new String(r.value(), StandardCharsets.UTF_8));
        }
      }
    }
  }

  /**
   * The ingresses still heard from that have not acknowledged, by key, described for the operator.
   */
  private Map<String, String> waitingFor(int generation, String input) {
    Instant now = brokerNow();
    Map<String, String> waiting = new TreeMap<>();
    latest.forEach(
        (key, heard) -> {
          IngressAck ack = heard.ack();
          Duration silent = Duration.between(heard.at(), now);
          if (ack.writesOnlyTo(generation, input) || silent.toMillis() > ack.goneAfterMs()) {
            return;
          }
          waiting.put(
              key,
              ack.instance()
                  + " (writes to "
                  + ack.input()
                  + (ack.input().equals(input) && !ack.drained()
                      ? " with writes to the old input in flight"
                      : "")
                  + ", generation "
                  + ack.generation()
                  + ", last heard "
                  + Steps.format(silent)
                  + " ago)");
        });
    return waiting;
  }

  private String acknowledged(int generation, String input) {
    long acked =
        latest.values().stream().filter(h -> h.ack().writesOnlyTo(generation, input)).count();
    long gone = latest.size() - acked;
    return acked
        + " ingress"
        + (acked == 1 ? "" : "es")
        + " acknowledged"
        + (gone > 0
            ? "; " + gone + " silent past their bound (stopped or frozen: not waited for)"
            : "");
  }

  @Override
  public void close() {
    consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    probe.close(Duration.ofSeconds(5));
  }
}
