package dev.runlane.common.generation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.runlane.common.config.EnvReader;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The control topic: one compacted partition holding, per pipeline (keyed by its base input topic,
 * {@code TOPIC_WEBHOOKS}), the latest {@link Generation}. Written only by the operator tools; read
 * by the ingress (which topic to write) and the processor (which generation to run). No record for
 * a pipeline means generation 0 (D35).
 *
 * <p>A generation whose JSON is larger than {@link #PART_BYTES} (a replay naming hundreds of
 * thousands of parked offsets) is written as parts, keyed {@code <pipeline>#part-<i>}, followed by
 * an empty record under the pipeline's key naming them, all in one transaction: no record reaches
 * the 1 MB a topic and a producer accept by default, which the operator cannot raise for the tools
 * (D75).
 */
public final class ControlTopic {
  public static final String ENV = "TOPIC_CONTROL";
  public static final String DEFAULT_NAME = "runlane.control";

  /** The most bytes of a generation's JSON one record carries (D75). */
  public static final int PART_BYTES = 512 * 1024;

  /** On a part: {@code <write id> <index> <count>}. */
  static final String PART_HEADER = "runlane.control.part";

  /**
   * On the record under the pipeline's key whose generation is in parts: {@code <write id>
   * <count>}.
   */
  static final String PARTS_HEADER = "runlane.control.parts";

  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  private ControlTopic() {}

  /** {@code TOPIC_CONTROL}, default {@code runlane.control}; a problem is recorded on env. */
  public static String nameFromEnv(EnvReader env) {
    String name = env.string(ENV, DEFAULT_NAME);
    if (!name.matches("[a-zA-Z0-9._-]{1,249}")) {
      env.problem(ENV + "='" + name + "' is not a legal topic name");
      return DEFAULT_NAME;
    }
    return name;
  }

  /** The topic as a service creates it when missing: one partition, compacted. */
  public static NewTopic newTopic(String name, TopicSettings settings) {
    return TopicEnsurer.compacted(name, new TopicSettings(1, settings.replicationFactor()));
  }

  public static byte[] encode(Generation generation) {
    return toJson(generation);
  }

  /** The control topic's JSON of any of its records (generations, retired inputs, acks). */
  static byte[] toJson(Object value) {
    try {
      return JSON.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode " + value, e);
    }
  }

  /**
   * @throws IllegalArgumentException naming {@code what} if {@code json} is not one
   */
  static <T> T fromJson(byte[] json, Class<T> type, String what) {
    try {
      return JSON.readValue(json, type);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("unreadable " + what, e);
    }
  }

  public static Generation decode(byte[] json) {
    try {
      return JSON.readValue(json, Generation.class);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "unreadable generation record: " + new String(json, StandardCharsets.UTF_8), e);
    }
  }

  /**
   * The records that make {@code generation} the pipeline's latest, in the order they are written:
   * one, or its parts and then the record naming them (D75).
   */
  static List<ProducerRecord<String, byte[]>> records(
      String topic, String pipeline, Generation generation) {
    byte[] json = encode(generation);
    if (json.length <= PART_BYTES) {
      return List.of(new ProducerRecord<>(topic, 0, pipeline, json));
    }
    String id = UUID.randomUUID().toString();
    int count = (json.length + PART_BYTES - 1) / PART_BYTES;
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      byte[] part =
          Arrays.copyOfRange(json, i * PART_BYTES, Math.min(json.length, (i + 1) * PART_BYTES));
      ProducerRecord<String, byte[]> r =
          new ProducerRecord<>(topic, 0, pipeline + "#part-" + i, part);
      r.headers().add(PART_HEADER, ascii(id + " " + i + " " + count));
      out.add(r);
    }
    ProducerRecord<String, byte[]> named = new ProducerRecord<>(topic, 0, pipeline, new byte[0]);
    named.headers().add(PARTS_HEADER, ascii(id + " " + count));
    out.add(named);
    return out;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * One pipeline's records read in order, and its latest generation: records of other pipelines are
   * skipped; parts are kept until the record naming them is read, then joined (D75).
   */
  static final class Assembler {
    private final String pipeline;
    private final String partPrefix;
    private final Map<Integer, byte[]> parts = new HashMap<>();
    private String partsOf; // the write id of the parts kept
    private final String retiredKey;
    private Generation latest;
    private RetiredInputs retired = RetiredInputs.NONE;
    private String incomplete; // why the latest record could not be read, or null

    Assembler(String pipeline) {
      this.pipeline = pipeline;
      this.partPrefix = pipeline + "#part-";
      this.retiredKey = RetiredInputs.key(pipeline);
    }

    /** Takes the next record of the control topic. */
    void accept(String key, byte[] value, Headers headers) {
      if (key == null || value == null) {
        return;
      }
      if (key.startsWith(partPrefix)) {
        String[] f = header(headers, PART_HEADER);
        if (f != null) {
          if (!f[0].equals(partsOf)) {
            parts.clear();
            partsOf = f[0];
          }
          parts.put(Integer.parseInt(f[1]), value);
        }
      } else if (key.equals(retiredKey)) {
        retired = RetiredInputs.decode(value);
      } else if (key.equals(pipeline)) {
        String[] f = header(headers, PARTS_HEADER);
        if (f == null) {
          latest = decode(value);
          incomplete = null;
        } else {
          joinParts(f[0], Integer.parseInt(f[1]));
        }
      }
    }

    private void joinParts(String id, int count) {
      ByteArrayOutputStream json = new ByteArrayOutputStream();
      for (int i = 0; i < count; i++) {
        byte[] part = id.equals(partsOf) ? parts.get(i) : null;
        if (part == null) {
          // Only an older record can lose its parts (to compaction, behind newer ones): a newer
          // record of the pipeline follows, which replaces this one.
          incomplete =
              "its latest record names " + count + " parts (" + id + "), part " + i + " is missing";
          latest = null;
          return;
        }
        json.writeBytes(part);
      }
      latest = decode(json.toByteArray());
      incomplete = null;
      parts.clear();
    }

    private static String[] header(Headers headers, String name) {
      Header h = headers.lastHeader(name);
      return h == null ? null : new String(h.value(), StandardCharsets.US_ASCII).split(" ");
    }

    /**
     * The latest generation read, or empty if none was written (generation 0).
     *
     * @throws IllegalStateException if the latest record's parts were not all read
     */
    Optional<Generation> latest() {
      if (incomplete != null) {
        throw new IllegalStateException(
            "cannot read the generation of " + pipeline + ": " + incomplete);
      }
      return Optional.ofNullable(latest);
    }
  }

  /**
   * Writes generation records, each in a transaction of its own. Its transactional id is the
   * pipeline's, so a second writer (another operator's command on the same pipeline) fences the
   * first: only one command drives a pipeline at a time (D35).
   */
  public static final class Writer implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;
    private final String topic;
    private final String pipeline;

    public Writer(Map<String, Object> clientSettings, String topic, String pipeline) {
      Map<String, Object> p = new HashMap<>(clientSettings);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "runlane-tools/" + topic + "/" + pipeline);
      // Readers wait for an open transaction to end (Reader.latest): a command killed mid-write
      // holds them for this long, not Kafka's default minute.
      p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 15_000);
      this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
      this.topic = topic;
      this.pipeline = pipeline;
      try {
        producer.initTransactions();
      } catch (RuntimeException e) {
        producer.close(Duration.ZERO);
        throw e;
      }
    }

    /**
     * Makes {@code generation} the pipeline's latest record.
     *
     * @throws org.apache.kafka.common.errors.ProducerFencedException if another writer took over
     */
    public void write(Generation generation) {
      write(records(topic, pipeline, generation), "the generation record");
    }

    /**
     * Makes {@code retired} the pipeline's list of retired inputs (D71), in a transaction of its
     * own.
     *
     * @throws org.apache.kafka.common.errors.ProducerFencedException if another writer took over
     */
    public void write(RetiredInputs retired) {
      write(
          List.of(new ProducerRecord<>(topic, 0, RetiredInputs.key(pipeline), retired.encode())),
          "the list of retired inputs");
    }

    /** Writes {@code records} in one transaction. */
    private void write(List<ProducerRecord<String, byte[]>> records, String what) {
      producer.beginTransaction();
      try {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (ProducerRecord<String, byte[]> r : records) {
          sent.add(producer.send(r));
        }
        for (Future<RecordMetadata> f : sent) {
          f.get(30, TimeUnit.SECONDS);
        }
        producer.commitTransaction();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        abortQuietly(e);
        throw new KafkaException("interrupted writing " + topic, e);
      } catch (ExecutionException | TimeoutException e) {
        abortQuietly(e);
        throw new KafkaException(
            "could not write " + what + " to " + topic + ": " + e.getCause(), e);
      }
    }

    /** Aborts the open transaction; a failure to do so (fenced, say) is kept with the cause. */
    private void abortQuietly(Exception cause) {
      try {
        producer.abortTransaction();
      } catch (RuntimeException e) {
        cause.addSuppressed(e);
      }
    }

    @Override
    public void close() {
      producer.close(Duration.ofSeconds(10));
    }
  }

  /** Creates the control topic if it is missing. */
  public static void ensure(Admin admin, String topic, TopicSettings settings) {
    TopicEnsurer.ensure(admin, List.of(newTopic(topic, settings)), Duration.ofSeconds(30));
  }

  /**
   * Follows the control topic: each {@link #latest} reads what was written since the last call and
   * returns the latest generation of the pipeline. Not thread-safe: one owner thread.
   */
  public static final class Reader implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    private final KafkaConsumer<byte[], byte[]> ends;
    private final TopicPartition partition;
    private final Assembler records;

    public Reader(Map<String, Object> clientSettings, String topic, String pipeline) {
      Map<String, Object> c = new HashMap<>(clientSettings);
      c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      c.remove(ConsumerConfig.GROUP_ID_CONFIG);
      Map<String, Object> e = new HashMap<>(c);
      e.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
      c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // records are transactional
      this.consumer = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
      try {
        this.ends =
            new KafkaConsumer<>(e, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      } catch (RuntimeException x) {
        consumer.close(CloseOptions.timeout(Duration.ZERO));
        throw x;
      }
      this.partition = new TopicPartition(topic, 0);
      this.records = new Assembler(pipeline);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
    }

    /**
     * Reads the control topic to its end (at most {@code timeout}) and returns the pipeline's
     * latest generation, or empty if none was ever written (generation 0).
     *
     * <p>The end is the partition's high watermark, not its last stable offset: a writer's commit
     * returns before the broker has written the transaction's markers, and until then the last
     * stable offset still stands before the record just committed. Read to the high watermark, a
     * reader sees every record whose write returned before this call, so a processor never joins a
     * generation a command declared stopped before it looked (design.md §8).
     *
     * @throws org.apache.kafka.common.errors.TimeoutException if the end was not reached in time
     * @throws IllegalStateException if the latest record's parts were not all read
     */
    public Optional<Generation> latest(Duration timeout) {
      long deadline = System.nanoTime() + timeout.toNanos();
      long end = ends.endOffsets(List.of(partition), timeout).get(partition);
      while (consumer.position(partition, timeout) < end) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          records.accept(r.key(), r.value(), r.headers());
        }
        if (System.nanoTime() - deadline > 0) {
          // Named in full: Kafka's TimeoutException, where write() catches the JDK's.
          throw new org.apache.kafka.common.errors.TimeoutException(
              "could not read " + partition.topic() + " to its end within " + timeout);
        }
      }
      return records.latest();
    }

    /** The inputs grows retired, as of the last {@link #latest} (D71). */
    public RetiredInputs retired() {
      return records.retired;
    }

    @Override
    public void close() {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
      ends.close(CloseOptions.timeout(Duration.ofSeconds(5)));
    }
  }
}
