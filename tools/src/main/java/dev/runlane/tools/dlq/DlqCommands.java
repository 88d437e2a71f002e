package dev.runlane.tools.dlq;

import dev.runlane.common.generation.Generation;
import dev.runlane.common.kafka.RecordHeaders;
import dev.runlane.tools.Refused;
import dev.runlane.tools.Steps;
import dev.runlane.tools.generation.Pipeline;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * {@code dlq list | show | redrive}. A re-drive writes the chosen records back into the input the
 * ingress writes now (the current generation's), keyed by their run id, with their original headers
 * and {@code dlq.redriven_from}: they go through the same dedup and order rules, so an event that
 * was applied since is a duplicate, never applied twice (D38).
 */
public final class DlqCommands {
  private static final String REUSED = "request_id_reused";

  private static final int SHOW_BODY_BYTES = 64 * 1024;

  private final Pipeline pipeline;
  private final PrintStream out;

  public DlqCommands(Pipeline pipeline, PrintStream out) {
    this.pipeline = pipeline;
    this.out = out;
  }

  private String dlq() {
    return pipeline.config().topics().dlq();
  }

  /** Counts by reason, with the oldest and newest of each and one example's coordinates. */
  public void list() {
    Map<String, long[]> byReason = new TreeMap<>(); // count, first ts, last ts
    Map<String, String> example = new TreeMap<>();
    DeadLetters.each(
        pipeline.clientSettings(),
        dlq(),
        r -> {
          String reason = String.valueOf(RecordHeaders.get(r.headers(), RecordHeaders.DLQ_REASON));
          long[] s = byReason.computeIfAbsent(reason, k -> new long[] {0, Long.MAX_VALUE, 0});
          s[0]++;
          s[1] = Math.min(s[1], r.timestamp());
          s[2] = Math.max(s[2], r.timestamp());
          example.putIfAbsent(reason, dlq() + "/" + r.partition() + "/" + r.offset());
        });
    long total = byReason.values().stream().mapToLong(s -> s[0]).sum();
    out.printf("%s: %d records%n", dlq(), total);
    byReason.forEach(
        (reason, s) ->
            out.printf(
                "  %-24s %8d  %s .. %s  e.g. %s%n",
                reason,
                s[0],
                Instant.ofEpochMilli(s[1]),
                Instant.ofEpochMilli(s[2]),
                example.get(reason)));
  }

  /** One record: coordinates, timestamp, key, headers, and the body (up to 64 KiB). */
  public void show(String coordinates) {
    DeadLetters.Coordinates at = DeadLetters.Coordinates.parse(coordinates);
    ConsumerRecord<byte[], byte[]> r =
        DeadLetters.at(pipeline.clientSettings(), at.topic(), at.partition(), at.offset())
            .orElseThrow(() -> new Refused("no record at " + at));
    out.printf("%s  timestamp %s%n", at, Instant.ofEpochMilli(r.timestamp()));
    out.printf("key: %s%n", r.key() == null ? "(none)" : utf8(r.key()));
    for (Header h : r.headers()) {
      out.printf("header %s: %s%n", h.key(), h.value() == null ? "(null)" : utf8(h.value()));
    }
    if (r.value() == null) {
      out.println("body: (none; " + RecordHeaders.DLQ_SOURCE + " says where it stays)");
    } else {
      int n = Math.min(r.value().length, SHOW_BODY_BYTES);
      out.printf(
          "body (%d bytes%s):%n%s%n",
          r.value().length,
          n < r.value().length ? ", first " + n + " shown" : "",
          new String(r.value(), 0, n, StandardCharsets.UTF_8));
    }
  }

  /**
   * Re-drives the DLQ records chosen by {@code reason} and/or {@code only} (coordinates), at most
   * {@code ratePerSecond}. Records whose body still cannot be decoded are skipped and counted;
   * {@code request_id_reused} records are refused unless {@code force}.
   *
   * @return records written to the input
   */
  public long redrive(
      String reason, List<String> only, int ratePerSecond, boolean dryRun, boolean force) {
    if (reason == null && only.isEmpty()) {
      throw new Refused(
          "choose what to re-drive: --reason R and/or --at <topic>/<partition>/<offset>");
    }
    if (ratePerSecond < 1) {
      throw new Refused("--rate must be at least 1 per second");
    }
    Steps steps = new Steps(out);
    String input = activeInput();
    steps.step("choose records of " + dlq() + (reason != null ? " with reason " + reason : ""));
    List<ConsumerRecord<byte[], byte[]>> chosen =
        only.isEmpty() ? withReason(reason) : at(only, reason);
    steps.done(chosen.size() + " records");
    refuseReused(chosen, dryRun || force);
    steps.step(
        (dryRun ? "check (dry run) " : "re-drive ")
            + "them into "
            + input
            + " at most "
            + ratePerSecond
            + "/s");
    Redrive redrive = new Redrive(pipeline, input, ratePerSecond, dryRun);
    long written = redrive.write(chosen);
    Map<String, Integer> skipped = redrive.skipped();
    steps.done(
        written
            + (dryRun ? " would be re-driven" : " re-driven")
            + (skipped.isEmpty() ? "" : "; skipped: " + skipped));
    steps.summary("dlq redrive: " + written + " of " + chosen.size());
    return written;
  }

  /**
   * Refuses to re-drive a copy of a request id that was taken first for another run, unless {@code
   * allowed}: while that run's done marker lives it is dead-lettered again, and once the marker
   * expired it is applied to the second run, which a request id naming one event of one run forbids
   * (D41). Neither is what a re-drive is for (issue 36 item 6).
   */
  private static void refuseReused(List<ConsumerRecord<byte[], byte[]>> chosen, boolean allowed) {
    long reused =
        chosen.stream()
            .filter(r -> REUSED.equals(RecordHeaders.get(r.headers(), RecordHeaders.DLQ_REASON)))
            .count();
    if (reused > 0 && !allowed) {
      throw new Refused(
          reused
              + " of the chosen records are "
              + REUSED
              + ": a re-drive dead-letters each again while its first run's done marker lives"
              + " (DEDUP_DONE_TTL_SECONDS), and applies it to its second run once the marker"
              + " expired, so one request id would change two runs (D41). Add --force only to apply"
              + " them to their own runs on purpose");
    }
  }

  /** The input the ingress writes now, if its generation is active. */
  private String activeInput() {
    Generation latest = pipeline.latest();
    if (latest.state() != Generation.State.ACTIVE) {
      // A grow moves the input, and nothing would read what went to the old one after its copy.
      throw new Refused(
          latest.describe() + " is being prepared: re-drive once it is active (`runlane status`)");
    }
    return latest.ingressInput();
  }

  /** Every DLQ record with {@code reason}. */
  private List<ConsumerRecord<byte[], byte[]>> withReason(String reason) {
    List<ConsumerRecord<byte[], byte[]>> chosen = new ArrayList<>();
    DeadLetters.each(
        pipeline.clientSettings(),
        dlq(),
        r -> {
          if (reason.equals(RecordHeaders.get(r.headers(), RecordHeaders.DLQ_REASON))) {
            chosen.add(r);
          }
        });
    return chosen;
  }

  /** The records at {@code coordinates}, those with {@code reason} unless it is null. */
  private List<ConsumerRecord<byte[], byte[]>> at(List<String> coordinates, String reason) {
    List<ConsumerRecord<byte[], byte[]>> chosen = new ArrayList<>();
    for (String c : coordinates) {
      DeadLetters.Coordinates at = DeadLetters.Coordinates.parse(c);
      ConsumerRecord<byte[], byte[]> r =
          DeadLetters.at(pipeline.clientSettings(), at.topic(), at.partition(), at.offset())
              .orElseThrow(() -> new Refused("no record at " + at));
      if (reason == null
          || reason.equals(RecordHeaders.get(r.headers(), RecordHeaders.DLQ_REASON))) {
        chosen.add(r);
      }
    }
    return chosen;
  }

  private static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
