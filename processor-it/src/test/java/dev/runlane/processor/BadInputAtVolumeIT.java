package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.runlane.common.envelope.SumeEvents;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import dev.runlane.processor.runs.RunState;
import dev.runlane.processor.runs.RunStateJson;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;

/**
 * Issue 25: thousands of bad records written straight to the input, interleaved with valid events
 * (and copies of some): every bad one is in the DLQ once, with its reason; every valid one is
 * applied once; the processor keeps running on the same stream threads; and the heap it keeps
 * afterwards does not grow with what went through it.
 */
@RealInfra
class BadInputAtVolumeIT {

  /** {@code PROCESSOR_MAX_BODY_BYTES}: the default, as deployed. */
  private static final int LIMIT = 1024 * 1024;

  private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  private static final String ID_HEADER = "test.id";
  private static final int VALID = 3_000;
  private static final int COPIES = 300;
  private static final int RUNS = 200;
  private static final int WARM_UP = 300;

  /**
   * The most live heap the run may leave behind. Far less than the bad input that went through
   * (over 70 MiB, most of it in records over the body limit), so keeping any fair part of it fails.
   */
  private static final long RETAINED_BYTES = 32L * 1024 * 1024;

  @Test
  void badRecordsAtVolumeAreDeadLetteredWithTheirReasonAndValidEventsAppliedOnce(Infra infra)
      throws Exception {
    String name = infra.uniqueName("badinput");
    try (ProcessorHarness h =
            new ProcessorHarness(infra.bootstrapServers(), infra.redisUri(), name, 256);
        ProcessorHarness.Reader events = h.new Reader(h.topics.events());
        ProcessorHarness.Reader dlq = h.new Reader(h.topics.dlq());
        ProcessorHarness.Reader runs = h.new Reader(h.topics.runs());
        ProcessorHarness.Reader stale = h.new Reader(h.topics.stale())) {
      // The input exists first, with room for records over the processor's body limit: what an
      // ingress whose INGRESS_MAX_BODY_BYTES is above PROCESSOR_MAX_BODY_BYTES writes.
      createInput(infra.bootstrapServers(), h.topics.webhooks(), 4 * LIMIT);
      h.start();
      Set<String> threads = streamThreads(h);

      List<Rec> plan = plan(h.topics.webhooks());
      long badBytes = plan.stream().filter(r -> r.reason != null).mapToLong(r -> r.length).sum();
      int bad = (int) plan.stream().filter(r -> r.reason != null).count();

      KafkaProducer<byte[], byte[]> producer = producer(h.bootstrap);
      List<Exception> errors = Collections.synchronizedList(new ArrayList<>());
      // Warm up (caches, JIT, Redis connections) before the baseline: runs of their own.
      for (int i = 0; i < WARM_UP; i++) {
        send(
            producer,
            valid(h.topics.webhooks(), "warm-" + i, "run-warm-" + (i % 10), T0.plusSeconds(i), ""),
            errors);
      }
      producer.flush();
      await().atMost(Duration.ofSeconds(60)).until(() -> h.decided() >= WARM_UP);
      long baseline = liveHeap();

      HeapSampler sampler = new HeapSampler(h);
      sampler.start();
      long started = System.nanoTime();
      for (Rec r : plan) {
        send(producer, r, errors);
      }
      producer.flush();
      producer.close();
      assertThat(errors).as("writes refused").isEmpty();
      double total = WARM_UP + plan.size();
      await()
          .atMost(Duration.ofSeconds(90))
          .untilAsserted(() -> assertThat(h.decided()).as("records decided").isEqualTo(total));
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      sampler.stop();
      long after = liveHeap();

      // The processor kept running on the threads it started with: no thread died.
      assertThat(sampler.states)
          .as("Streams states seen during the run")
          .containsOnly(KafkaStreams.State.RUNNING);
      assertThat(h.app.streams().state()).isEqualTo(KafkaStreams.State.RUNNING);
      assertThat(h.app.fatal()).isNull();
      assertThat(streamThreads(h)).as("no stream thread replaced").isEqualTo(threads);
      assertThat(h.live()).isEqualTo(200);

      // Every bad record in the DLQ, once, with its reason and its bytes (or, over the limit, a
      // reference to where they stay).
      // Decided is not yet committed: wait for the records, not just for the readers' ends.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> dlq.caughtUp() && dlq.records.size() >= bad);
      Map<String, List<ConsumerRecord<String, byte[]>>> dead =
          dlq.records.stream().collect(Collectors.groupingBy(r -> header(r, ID_HEADER)));
      List<Rec> expectedDead = plan.stream().filter(r -> r.reason != null).toList();
      assertThat(dead.keySet())
          .containsExactlyInAnyOrderElementsOf(expectedDead.stream().map(r -> r.id).toList());
      Map<String, Integer> byReason = new TreeMap<>();
      for (Rec r : expectedDead) {
        List<ConsumerRecord<String, byte[]>> got = dead.get(r.id);
        assertThat(got).as(r.variant).hasSize(1);
        ConsumerRecord<String, byte[]> d = got.get(0);
        assertThat(header(d, RecordHeaders.DLQ_REASON)).as(r.variant).isEqualTo(r.reason);
        assertThat(header(d, RecordHeaders.DLQ_DETAIL)).as(r.variant).isNotBlank();
        if (r.reason.equals("too_large")) {
          assertThat(d.value()).as("a reference, not the bytes").isNull();
          assertThat(header(d, RecordHeaders.DLQ_SOURCE))
              .isEqualTo(r.sent.topic() + "/" + r.sent.partition() + "/" + r.sent.offset());
        } else if (r.length < 0) {
          assertThat(d.value()).as(r.variant).isNull();
        } else {
          assertThat(sha256(d.value())).as(r.variant).isEqualTo(r.sha256);
        }
        byReason.merge(r.reason, 1, Integer::sum);
      }

      // Every valid event applied once, in sume.events exactly as written; its copies not at all.
      List<Rec> valid = plan.stream().filter(r -> r.requestId != null && !r.copy).toList();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> events.caughtUp() && events.records.size() >= WARM_UP + valid.size());
      Map<String, List<ConsumerRecord<String, byte[]>>> applied =
          events.records.stream().collect(Collectors.groupingBy(r -> header(r, "request_id")));
      Set<String> expectedApplied = new HashSet<>();
      valid.forEach(r -> expectedApplied.add(r.requestId));
      for (int i = 0; i < WARM_UP; i++) {
        expectedApplied.add("warm-" + i);
      }
      assertThat(applied.keySet()).containsExactlyInAnyOrderElementsOf(expectedApplied);
      for (Rec r : valid) {
        List<ConsumerRecord<String, byte[]>> got = applied.get(r.requestId);
        assertThat(got).as(r.requestId).hasSize(1);
        assertThat(got.get(0).key()).isEqualTo(r.runId);
        assertThat(sha256(got.get(0).value())).isEqualTo(r.sha256);
      }
      assertThat(h.count("applied", "store")).isEqualTo(WARM_UP + valid.size());
      assertThat(h.count("invalid", "decode")).isEqualTo(bad);
      double duplicates = h.count("duplicate", "redis") + h.count("duplicate", "store");
      await().atMost(Duration.ofSeconds(30)).until(stale::caughtUp);
      // A copy read before its original's done marker landed is decided by the run store: stale,
      // when the run has moved on since (design.md §6.3). Either way it is not applied again.
      assertThat(duplicates + h.count("stale", "store")).isEqualTo(COPIES);
      Set<String> copies =
          plan.stream().filter(r -> r.copy).map(r -> r.id).collect(Collectors.toSet());
      assertThat(stale.records).allMatch(r -> copies.contains(header(r, ID_HEADER)));

      // Each run's last state counts exactly its events and ends at its newest.
      await().atMost(Duration.ofSeconds(30)).until(runs::caughtUp);
      Map<String, RunState> last = new HashMap<>();
      runs.records.forEach(r -> last.put(r.key(), RunStateJson.fromJson(r.value())));
      Map<String, List<Rec>> perRun =
          valid.stream()
              .collect(
                  Collectors.groupingBy(r -> r.runId, LinkedHashMap::new, Collectors.toList()));
      perRun.forEach(
          (run, recs) -> {
            RunState state = last.get(run);
            assertThat(state).as(run).isNotNull();
            assertThat(state.appliedCount()).as(run).isEqualTo(recs.size());
            assertThat(state.lastRequestId())
                .as(run)
                .isEqualTo(recs.get(recs.size() - 1).requestId);
          });

      // The heap: nothing of what went through is kept.
      System.out.printf(
          "processor bad input at volume: %d records (%d bad, %.1f MiB; %d valid, %d copies) in %d"
              + " ms; dead letters by reason %s; live heap baseline %s, after %s (%+.1f MiB);"
              + " sampled peak used %s; highest heap after a collection %s%n",
          plan.size(),
          bad,
          badBytes / 1024.0 / 1024.0,
          valid.size(),
          COPIES,
          tookMs,
          byReason,
          mib(baseline),
          mib(after),
          (after - baseline) / 1024.0 / 1024.0,
          mib(sampler.peak.get()),
          mib(sampler.peakAfterGc.get()));
      assertThat(badBytes).as("the bound means something").isGreaterThan(2 * RETAINED_BYTES);
      assertThat(after - baseline).as("live heap kept after the run").isLessThan(RETAINED_BYTES);
    }
  }

  // ---- what is written ----

  /** One input record, and what must become of it. */
  static final class Rec {
    private static final AtomicLong SEQ = new AtomicLong();
    final String id = "t-" + SEQ.incrementAndGet();
    final String topic;
    final String variant;
    final byte[] key;
    final Supplier<byte[]> value; // large values are made when sent, not held
    final String reason; // the expected dlq.reason; null: a valid event
    final long length; // -1: a null value
    final byte[] sha256;
    String requestId;
    String runId;
    boolean copy;
    volatile RecordMetadata sent;

    Rec(String topic, String variant, byte[] key, Supplier<byte[]> value, String reason) {
      this.topic = topic;
      this.variant = variant;
      this.key = key;
      this.value = value;
      this.reason = reason;
      byte[] v = value.get();
      this.length = v == null ? -1 : v.length;
      this.sha256 = v == null ? null : sha256(v);
    }
  }

  private static Rec held(String topic, String variant, String key, byte[] value, String reason) {
    return new Rec(topic, variant, utf8(key), () -> value, reason);
  }

  private static Rec valid(
      String topic, String requestId, String runId, Instant createdAt, String padding) {
    byte[] body = ProcessorHarness.event(runId, requestId, createdAt, "run.updated", padding);
    Rec r = new Rec(topic, "valid", utf8(runId), () -> body, null);
    r.requestId = requestId;
    r.runId = runId;
    return r;
  }

  private static List<Rec> plan(String topic) {
    List<Rec> bad = new ArrayList<>();
    notUtf8()
        .forEach(
            (variant, body) ->
                repeat(
                    100, () -> bad.add(held(topic, variant, "run-enc", body.get(), "not_json"))));
    repeat(
        150,
        () ->
            bad.add(
                held(topic, "nested 33 deep", "run-deep", nested(newId(), 31, true), "too_deep")));
    repeat(
        150,
        () ->
            bad.add(
                held(
                    topic,
                    "nested 1,000 deep",
                    "run-deep",
                    nested(newId(), 998, true),
                    "too_deep")));
    // Large values are made again when written, not held.
    madeAgain(
        bad, topic, "nested 100,000 deep", "run-deep", id -> nested(id, 100_000, true), "too_deep");
    madeAgain(
        bad,
        topic,
        "nested 100,000 deep, never closed",
        "run-deep",
        id -> nested(id, 100_000, false),
        "too_deep");
    madeAgain(
        bad,
        topic,
        "limit + 1 byte",
        "run-big",
        id -> padded(id, "run-big", LIMIT + 1),
        "too_large");
    madeAgain(bad, topic, "2 MiB", "run-big", id -> padded(id, "run-big", 2 * LIMIT), "too_large");
    repeat(
        5,
        () ->
            bad.add(
                new Rec(
                    topic,
                    "exactly the limit, not JSON",
                    utf8("run-big"),
                    () -> notJson(LIMIT),
                    "not_json")));
    brokenEnvelopes()
        .forEach(
            (variant, reasonAndBody) ->
                repeat(
                    80,
                    () ->
                        bad.add(
                            held(
                                topic,
                                variant,
                                "run-broken",
                                reasonAndBody.getValue(),
                                reasonAndBody.getKey()))));
    repeat(
        200,
        () ->
            bad.add(
                held(
                    topic,
                    "key of another run",
                    "run-other",
                    envelope(newId(), "run-k", Instant.now()),
                    "key_mismatch")));
    repeat(
        100,
        () -> {
          byte[] body = envelope(newId(), "run-k", Instant.now());
          bad.add(new Rec(topic, "no key", null, () -> body, "key_mismatch"));
        });
    repeat(
        100,
        () -> {
          byte[] body = envelope(newId(), "run-k", Instant.now());
          bad.add(
              new Rec(
                  topic,
                  "key not UTF-8",
                  new byte[] {'r', (byte) 0xFF, (byte) 0xFE},
                  () -> body,
                  "key_mismatch"));
        });
    repeat(
        50, () -> bad.add(new Rec(topic, "null value", utf8("run-null"), () -> null, "not_json")));
    repeat(50, () -> bad.add(held(topic, "empty value", "run-null", new byte[0], "not_json")));

    // Valid events: created_at rises per run in the order they are written, so each is newer than
    // the last and must be applied. A few are as large as the limit allows.
    List<Rec> all = new ArrayList<>(bad);
    List<String[]> valid = new ArrayList<>();
    Random random = new Random(25);
    for (int i = 0; i < VALID; i++) {
      valid.add(new String[] {"ok-" + i, "run-" + (i % RUNS), ""});
    }
    for (int i = 0; i < 5; i++) {
      valid.add(new String[] {"ok-limit-" + i, "run-limit", "limit"});
    }
    List<Object> order = new ArrayList<>(all);
    order.addAll(valid);
    Collections.shuffle(order, random);
    Map<String, Integer> seconds = new HashMap<>();
    List<Rec> out = new ArrayList<>();
    for (Object o : order) {
      if (o instanceof Rec r) {
        out.add(r);
      } else {
        String[] v = (String[]) o;
        Instant createdAt = T0.plusSeconds(seconds.merge(v[1], 1, Integer::sum));
        Rec r =
            v[2].equals("limit")
                ? validAtLimit(topic, v[0], v[1], createdAt)
                : valid(topic, v[0], v[1], createdAt, "p".repeat(random.nextInt(400)));
        out.add(r);
      }
    }
    // Copies of valid events, each after its original.
    List<Integer> validAt = new ArrayList<>();
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i).requestId != null) {
        validAt.add(i);
      }
    }
    Collections.shuffle(validAt, random);
    List<int[]> inserts = new ArrayList<>();
    for (int i = 0; i < COPIES; i++) {
      int at = validAt.get(i);
      inserts.add(new int[] {at + 1 + random.nextInt(out.size() - at), at});
    }
    inserts.sort((a, b) -> Integer.compare(b[0], a[0]));
    for (int[] ins : inserts) {
      Rec original = out.get(ins[1]);
      byte[] body = original.value.get();
      Rec copy = new Rec(topic, "copy", original.key, () -> body, null);
      copy.requestId = original.requestId;
      copy.runId = original.runId;
      copy.copy = true;
      out.add(ins[0], copy);
    }
    return out;
  }

  private static Rec validAtLimit(String topic, String requestId, String runId, Instant createdAt) {
    byte[] head = ProcessorHarness.event(runId, requestId, createdAt, "run.updated", "");
    String padding = "p".repeat(LIMIT - head.length - "\",\"padding\":\"".length());
    Rec r =
        new Rec(
            topic,
            "valid, exactly the limit",
            utf8(runId),
            () -> ProcessorHarness.event(runId, requestId, createdAt, "run.updated", padding),
            null);
    assertThat(r.length).isEqualTo(LIMIT);
    r.requestId = requestId;
    r.runId = runId;
    return r;
  }

  /**
   * Adds 20 records of {@code variant}, each with an id of its own, whose values are made again
   * from it whenever they are written rather than held.
   */
  private static void madeAgain(
      List<Rec> bad,
      String topic,
      String variant,
      String key,
      Function<String, byte[]> value,
      String reason) {
    repeat(
        20,
        () -> {
          String id = newId();
          bad.add(new Rec(topic, variant, utf8(key), () -> value.apply(id), reason));
        });
  }

  private static void repeat(int n, Runnable r) {
    for (int i = 0; i < n; i++) {
      r.run();
    }
  }

  private static String newId() {
    return "bad-" + java.util.UUID.randomUUID();
  }

  private static byte[] envelope(String requestId, String runId, Instant createdAt) {
    return ProcessorHarness.event(runId, requestId, createdAt, "run.updated");
  }

  /** A valid envelope of {@code size} bytes. */
  private static byte[] padded(String requestId, String runId, int size) {
    byte[] head = envelope(requestId, runId, T0);
    String padding = "p".repeat(size - head.length - "\",\"padding\":\"".length());
    byte[] body = ProcessorHarness.event(runId, requestId, T0, "run.updated", padding);
    assertThat(body).hasSize(size);
    return body;
  }

  private static byte[] notJson(int size) {
    byte[] b = new byte[size];
    Arrays.fill(b, (byte) 'x');
    b[0] = '{';
    return b;
  }

  /** An envelope whose data holds {@code arrays} nested arrays: more than 30 are too deep. */
  private static byte[] nested(String requestId, int arrays, boolean closed) {
    StringBuilder sb =
        new StringBuilder(
            "{\"request_id\":\""
                + requestId
                + "\",\"created_at\":\""
                + T0
                + "\",\"type\":\"t\",\"data\":{\"run_id\":\"run-deep\",\"nest\":");
    sb.append("[".repeat(arrays));
    if (closed) {
      sb.append("]".repeat(arrays)).append("}}");
    }
    return utf8(sb.toString());
  }

  /** Envelopes that are not UTF-8 (RFC 8259 §8.1); each would otherwise be a valid, new event. */
  private static Map<String, Supplier<byte[]>> notUtf8() {
    Map<String, Supplier<byte[]>> out = new LinkedHashMap<>();
    out.put("Latin-1 é in data", () -> encoded("caf\u00e9", StandardCharsets.ISO_8859_1));
    out.put("lone continuation byte", () -> spliced(new byte[] {(byte) 0x80}, false));
    out.put("0xFF", () -> spliced(new byte[] {(byte) 0xFF}, false));
    out.put("truncated sequence", () -> spliced(new byte[] {(byte) 0xE2, (byte) 0x82}, false));
    out.put("overlong '/'", () -> spliced(new byte[] {(byte) 0xC0, (byte) 0xAF}, false));
    out.put(
        "UTF-8-encoded surrogate",
        () -> spliced(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, false));
    out.put(
        "overlong NUL in request_id", () -> spliced(new byte[] {(byte) 0xC0, (byte) 0x80}, true));
    out.put(
        "above U+10FFFF in request_id",
        () -> spliced(new byte[] {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, true));
    out.put("UTF-16LE", () -> encoded("x", StandardCharsets.UTF_16LE));
    out.put("UTF-16 with BOM", () -> encoded("x", StandardCharsets.UTF_16));
    out.put("UTF-32BE", () -> encoded("x", Charset.forName("UTF-32BE")));
    return out;
  }

  private static byte[] encoded(String note, Charset charset) {
    return SumeEvents.event("run-enc", newId(), Instant.now())
        .type("t")
        .data("note", note)
        .json()
        .getBytes(charset);
  }

  /** A valid envelope of run-enc with {@code bytes} in its note, or in its request id. */
  private static byte[] spliced(byte[] bytes, boolean inRequestId) {
    String text =
        SumeEvents.event("run-enc", (inRequestId ? "r^" : "") + newId(), Instant.now())
            .type("t")
            .data("note", inRequestId ? "ab" : "a^b")
            .json();
    byte[] t = utf8(text);
    int at = text.indexOf('^');
    byte[] out = new byte[t.length - 1 + bytes.length];
    System.arraycopy(t, 0, out, 0, at);
    System.arraycopy(bytes, 0, out, at, bytes.length);
    System.arraycopy(t, at + 1, out, at + bytes.length, t.length - at - 1);
    return out;
  }

  /** JSON that is no usable envelope: reason and body. */
  private static Map<String, Map.Entry<String, byte[]>> brokenEnvelopes() {
    Map<String, Map.Entry<String, byte[]>> out = new LinkedHashMap<>();
    String at = T0.toString();
    out.put(
        "no request_id",
        Map.entry(
            "missing_field",
            utf8("{\"created_at\":\"" + at + "\",\"data\":{\"run_id\":\"run-broken\"}}")));
    out.put(
        "no run id",
        Map.entry(
            "missing_field",
            utf8("{\"request_id\":\"b\",\"created_at\":\"" + at + "\",\"data\":{}}")));
    out.put(
        "no created_at",
        Map.entry(
            "missing_field", utf8("{\"request_id\":\"b\",\"data\":{\"run_id\":\"run-broken\"}}")));
    out.put(
        "created_at no timestamp",
        Map.entry(
            "bad_timestamp",
            utf8(
                "{\"request_id\":\"b\",\"created_at\":\"2026-13-45\",\"data\":{\"run_id\":\"run-broken\"}}")));
    out.put(
        "run_id a number",
        Map.entry(
            "wrong_type",
            utf8("{\"request_id\":\"b\",\"created_at\":\"" + at + "\",\"data\":{\"run_id\":42}}")));
    out.put("root an array", Map.entry("not_an_object", utf8("[{\"request_id\":\"b\"}]")));
    out.put(
        "request_id twice",
        Map.entry(
            "not_json",
            utf8(
                "{\"request_id\":\"b\",\"request_id\":\"c\",\"created_at\":\""
                    + at
                    + "\",\"data\":{\"run_id\":\"run-broken\"}}")));
    out.put(
        "trailing content",
        Map.entry(
            "not_json",
            utf8(
                "{\"request_id\":\"b\",\"created_at\":\""
                    + at
                    + "\",\"data\":{\"run_id\":\"run-broken\"}} {}")));
    out.put(
        "truncated",
        Map.entry(
            "not_json",
            utf8(
                "{\"request_id\":\"b\",\"created_at\":\""
                    + at
                    + "\",\"data\":{\"run_id\":\"run-bro")));
    return out;
  }

  private static KafkaProducer<byte[], byte[]> producer(String bootstrap) {
    Map<String, Object> c = new HashMap<>();
    c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    c.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 8 * LIMIT);
    return new KafkaProducer<>(c, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static void send(KafkaProducer<byte[], byte[]> producer, Rec r, List<Exception> errors) {
    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(r.topic, r.key, r.value.get());
    record.headers().add(new RecordHeader(ID_HEADER, utf8(r.id)));
    record
        .headers()
        .add(new RecordHeader("received_at", utf8(Long.toString(System.currentTimeMillis()))));
    if (r.requestId != null) {
      record.headers().add(new RecordHeader("request_id", utf8(r.requestId)));
    }
    producer.send(
        record,
        (metadata, error) -> {
          if (error != null) {
            errors.add(error);
          }
          r.sent = metadata;
        });
  }

  private static void createInput(String bootstrap, String topic, int maxMessageBytes)
      throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, 3, (short) 1)
                      .configs(
                          Map.of(
                              TopicConfig.MAX_MESSAGE_BYTES_CONFIG,
                              Integer.toString(maxMessageBytes)))))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
  }

  // ---- watching the processor ----

  private static Set<String> streamThreads(ProcessorHarness h) {
    Set<String> names = new HashSet<>();
    h.app.streams().metadataForLocalThreads().forEach(t -> names.add(t.threadName()));
    return names;
  }

  /** The heap in use after full collections: what is live. */
  private static long liveHeap() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  /** Samples the heap and the Streams state while the records go through. */
  static final class HeapSampler {
    final AtomicLong peak = new AtomicLong();
    final AtomicLong peakAfterGc = new AtomicLong();
    final Set<KafkaStreams.State> states = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final ProcessorHarness h;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    HeapSampler(ProcessorHarness h) {
      this.h = h;
    }

    void start() {
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      timer.scheduleAtFixedRate(
          () -> {
            states.add(h.app.streams().state());
            peak.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
            long afterGc = 0;
            for (var pool : ManagementFactory.getMemoryPoolMXBeans()) {
              if (pool.getType() == java.lang.management.MemoryType.HEAP
                  && pool.getCollectionUsage() != null) {
                afterGc += pool.getCollectionUsage().getUsed();
              }
            }
            peakAfterGc.accumulateAndGet(afterGc, Math::max);
          },
          0,
          50,
          TimeUnit.MILLISECONDS);
    }

    void stop() throws InterruptedException {
      timer.shutdown();
      assertThat(timer.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static String header(ConsumerRecord<String, byte[]> r, String name) {
    return RecordHeaders.get(r.headers(), name);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / 1024.0 / 1024.0);
  }
}
