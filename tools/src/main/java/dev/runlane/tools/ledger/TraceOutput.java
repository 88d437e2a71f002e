package dev.runlane.tools.ledger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runlane.common.decision.Decision;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Prints a trace in time order (D87): each delivery received (when, input coordinates, generation)
 * and each decision (outcome, layer, reason, the topic it wrote), then what was received and not
 * decided yet, the run's state now and each request id's Redis marker now, and with the sink each
 * request id's row and the sink's position (D94); or all of it as JSON.
 */
final class TraceOutput {
  private static final ObjectMapper JSON = JsonMapper.builder().build();

  private TraceOutput() {}

  /** One line of the story, at {@code at} (epoch ms; null sorts first). */
  private record Line(Long at, int order, String text) {}

  static void text(DecisionTrace.Result r, PrintStream out) {
    out.printf(
        "trace of %s%s: %d decisions (%,d records of %s read)%n",
        r.runId() == null ? "" : "run " + r.runId(),
        r.requestId() == null
            ? ""
            : (r.runId() == null ? "" : ", ") + "request_id " + r.requestId(),
        r.decisions().size(),
        r.scanned(),
        r.logTopic());
    List<Line> lines = new ArrayList<>();
    Map<String, Decision> received = new LinkedHashMap<>();
    for (Decision d : r.decisions()) {
      received.putIfAbsent(d.input(), d);
      lines.add(new Line(d.decidedAt(), 1, decided(d)));
    }
    received.values().forEach(d -> lines.add(new Line(d.receivedAt(), 0, receivedLine(d))));
    lines.sort(
        Comparator.comparing((Line l) -> l.at() == null ? Long.MIN_VALUE : l.at())
            .thenComparing(Line::order));
    lines.forEach(l -> out.printf("%-24s  %s%n", time(l.at()), l.text()));
    for (DecisionTrace.Undecided u : r.undecided()) {
      out.printf(
          "%-24s  received  request_id=%s input=%s: not decided yet (past the committed offset)%n",
          time(u.receivedAt()), u.requestId(), u.input());
    }
    r.runs()
        .forEach(
            (run, now) ->
                out.printf(
                    "run %s now: %s%n",
                    run, now.status() == 0 ? now.body() : now.status() + " " + now.body()));
    r.markers().forEach((id, m) -> out.printf("redis marker of %s now: %s%n", id, m));
    if (r.sink() != null) {
      sinkText(r.sink(), out);
    }
  }

  /** Each request id's row field by field, or "no row"; the sink's position (D94). */
  private static void sinkText(SinkRows.Now s, PrintStream out) {
    if (s.error() != null) {
      out.printf("sink %s now: %s%n", s.table(), s.error());
      return;
    }
    s.rows()
        .forEach(
            (id, row) ->
                out.printf(
                    "sink row of %s in %s: %s%n",
                    id, s.table(), row == null ? "no row" : rowText(row)));
    s.positions()
        .forEach(
            (at, next) ->
                out.printf(
                    "sink position on %s: %s (database %s, group %s)%n",
                    at,
                    next == null
                        ? "no offset stored (nothing written there yet)"
                        : "next offset " + next,
                    s.database(),
                    s.group()));
  }

  private static String rowText(SinkRows.Row row) {
    return "run_id="
        + row.runId()
        + " type="
        + row.type()
        + " created_at="
        + row.createdAt()
        + " received_at="
        + row.receivedAt()
        + " from="
        + row.topic()
        + "/"
        + row.partition()
        + "/"
        + row.offset()
        + (row.replay() == null ? "" : " replay=" + row.replay())
        + " recorded_at="
        + row.recordedAt()
        + " data="
        + (row.dataBytes() == null ? "null" : row.dataBytes() + " bytes");
  }

  private static String receivedLine(Decision d) {
    return "received  request_id="
        + d.requestId()
        + " input="
        + d.input()
        + " generation="
        + d.generation();
  }

  private static String decided(Decision d) {
    StringBuilder s =
        new StringBuilder(d.outcome() == Decision.Outcome.RELEASED ? "released  " : "decided   ");
    s.append("request_id=").append(d.requestId()).append(' ').append(d.outcome().tag());
    s.append(" by ").append(d.layer());
    if (d.reason() != null) {
      s.append(" (").append(d.reason()).append(')');
    }
    s.append(d.output() == null ? ", wrote nothing" : ", wrote to " + d.output());
    s.append(" input=").append(d.input()).append(" generation=").append(d.generation());
    if (d.replay() != null) {
      s.append(" replay=").append(d.replay());
    }
    return s.toString();
  }

  private static String time(Long at) {
    return at == null ? "(receipt unknown)" : Instant.ofEpochMilli(at).toString();
  }

  private static void sinkJson(SinkRows.Now s, ObjectNode n) {
    n.put("database", s.database());
    n.put("group", s.group());
    n.put("table", s.table());
    if (s.error() != null) {
      n.put("error", s.error());
    }
    ObjectNode rows = n.putObject("rows");
    s.rows()
        .forEach(
            (id, row) -> {
              if (row == null) {
                rows.putNull(id);
                return;
              }
              ObjectNode o = rows.putObject(id);
              o.put("request_id", row.requestId());
              o.put("run_id", row.runId());
              o.put("type", row.type());
              o.put("created_at", row.createdAt().toString());
              o.put("received_at", row.receivedAt().toString());
              o.put("topic", row.topic());
              o.put("kafka_partition", row.partition());
              o.put("kafka_offset", row.offset());
              if (row.replay() != null) {
                o.put("replay", row.replay());
              }
              o.put("recorded_at", row.recordedAt().toString());
              o.put("data_bytes", row.dataBytes());
            });
    ObjectNode positions = n.putObject("positions");
    s.positions().forEach(positions::put);
  }

  static void json(DecisionTrace.Result r, PrintStream out) {
    ObjectNode root = JSON.createObjectNode();
    root.put("run_id", r.runId());
    root.put("request_id", r.requestId());
    root.put("decision_log", r.logTopic());
    root.put("records_read", r.scanned());
    ArrayNode decisions = root.putArray("decisions");
    r.decisions().forEach(d -> decisions.add(JSON.valueToTree(d)));
    ArrayNode undecided = root.putArray("undecided");
    for (DecisionTrace.Undecided u : r.undecided()) {
      ObjectNode n = undecided.addObject();
      n.put("input", u.input());
      n.put("run_id", u.runId());
      n.put("request_id", u.requestId());
      if (u.receivedAt() != null) {
        n.put("received_at", u.receivedAt());
      }
    }
    ObjectNode runs = root.putObject("runs_now");
    r.runs()
        .forEach(
            (run, now) -> {
              ObjectNode n = runs.putObject(run);
              n.put("status", now.status());
              n.put("body", now.body());
            });
    ObjectNode markers = root.putObject("redis_markers_now");
    r.markers().forEach(markers::put);
    if (r.sink() != null) {
      sinkJson(r.sink(), root.putObject("sink"));
    }
    try {
      out.println(JSON.writeValueAsString(root));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
