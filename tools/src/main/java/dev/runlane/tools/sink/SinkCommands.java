package dev.runlane.tools.sink;

import dev.runlane.sink.SinkConfig;
import dev.runlane.sink.db.AcceptedGaps;
import dev.runlane.sink.db.OffsetStore;
import dev.runlane.sink.db.RejectedTable;
import dev.runlane.tools.Refused;
import dev.runlane.tools.kafka.Cluster;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code sink rejected | accept-gap}: the sink's database, configured by the sink's own variables
 * ({@code SINK_DATABASE_URL}, {@code SINK_DATABASE_USER}, {@code SINK_DATABASE_PASSWORD}, {@code
 * SINK_GROUP_ID}, {@code TOPIC_EVENTS}).
 */
public final class SinkCommands {
  private final SinkConfig config;
  private final Cluster cluster;
  private final PrintStream out;

  public SinkCommands(SinkConfig config, Cluster cluster, PrintStream out) {
    this.config = config;
    this.cluster = cluster;
    this.out = out;
  }

  /** The newest records set aside (D61), with why; exit 0 whether there are any or none. */
  public void rejected(int limit) throws SQLException {
    RejectedTable table = new RejectedTable(config.groupId());
    try (Connection c = connect()) {
      long total = table.count(c);
      List<RejectedTable.Row> rows = table.newest(c, limit);
      out.printf(
          "sink_rejected (group %s): %d record(s)%s%n",
          config.groupId(), total, total > rows.size() ? ", newest " + rows.size() + " shown" : "");
      for (RejectedTable.Row r : rows) {
        out.printf(
            "  %s/%d/%d  %s  request_id=%s run_id=%s  %s%s%n",
            r.topic(),
            r.partition(),
            r.offset(),
            r.rejectedAt(),
            r.requestId(),
            r.runId(),
            r.sqlState() == null ? "" : "SQLSTATE " + r.sqlState() + ": ",
            r.reason());
      }
      c.rollback();
    }
  }

  /**
   * Moves a partition's stored offset when it is outside the log (D63): up to the log start when
   * retention deleted records the database never got, or, with {@code to}, back to where a topic
   * made again (or truncated) goes on; the move is recorded in {@code sink_gaps}. Refuses where the
   * stored offset is inside the log: it is the only record of what the database holds.
   *
   * @param to where to go on from when the stored offset is past the log end, else null
   */
  public void acceptGap(int partition, Long to, boolean dryRun) throws SQLException {
    String topic = config.topic();
    int partitions =
        cluster
            .partitions(topic)
            .orElseThrow(() -> new Refused("topic " + topic + " does not exist"));
    if (partition < 0 || partition >= partitions) {
      throw new Refused(topic + " has partitions 0-" + (partitions - 1) + ", not " + partition);
    }
    long logStart = cluster.startOffsets(topic, partitions).get(partition);
    // The sink reads committed records only: its end is the last stable offset.
    long logEnd =
        cluster.endOffsets(topic, partitions, IsolationLevel.READ_COMMITTED).get(partition);
    TopicPartition tp = new TopicPartition(topic, partition);
    try (Connection c = connect()) {
      Long stored = new OffsetStore(config.groupId()).read(c, List.of(tp)).get(tp);
      long target = target(tp, stored, logStart, logEnd, to);
      out.printf(
          "%s: stored offset %d, log start %d, log end %d: %s%n",
          tp,
          stored,
          logStart,
          logEnd,
          target > stored
              ? (target - stored) + " record(s) deleted by retention were never stored"
              : "the stored offset is past the log end; going on from " + target);
      if (dryRun) {
        out.println("dry run: nothing changed");
        return;
      }
      if (!new AcceptedGaps(config.groupId()).accept(c, topic, partition, stored, target)) {
        c.rollback();
        throw new Refused(tp + ": the stored offset moved meanwhile; run the command again");
      }
      c.commit();
      out.printf(
          "accepted: %d -> %d recorded in sink_gaps; the sink goes on from %d within a few"
              + " seconds%n",
          stored, target, target);
    }
  }

  /** Where the stored offset moves to, or a refusal that says why not. */
  private static long target(TopicPartition tp, Long stored, long logStart, long logEnd, Long to) {
    if (stored != null && stored < logStart) {
      if (to != null) {
        throw new Refused(
            tp
                + ": records below the log start "
                + logStart
                + " are gone; --to is for a stored"
                + " offset past the log end");
      }
      return logStart;
    }
    if (stored != null && stored > logEnd) {
      if (to == null || to < logStart || to > logEnd) {
        throw new Refused(
            tp
                + ": the stored offset "
                + stored
                + " is past the log end "
                + logEnd
                + " (the topic was made again, or its log truncated): give --to <offset>"
                + " between "
                + logStart
                + " and "
                + logEnd
                + ", where the records the database lacks begin (the log start for a topic made"
                + " again)");
      }
      return to;
    }
    throw new Refused(
        tp
            + ": no gap (stored offset "
            + stored
            + ", log "
            + logStart
            + "-"
            + logEnd
            + "): every record from the stored offset on is still in the topic");
  }

  private Connection connect() throws SQLException {
    return SinkConnections.open(config);
  }
}
