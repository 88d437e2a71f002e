package dev.runlane.tools.sink;

import dev.runlane.sink.SinkConfig;
import dev.runlane.sink.db.AcceptedGaps;
import dev.runlane.sink.db.OffsetStore;
import dev.runlane.sink.db.RejectedTable;
import dev.runlane.tools.Refused;
import dev.runlane.tools.kafka.Cluster;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
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
   * Moves a partition's stored offset up to the log start when retention deleted records the
   * database never got, recording the range in {@code sink_gaps} (D63). Refuses where there is no
   * gap: the stored offset is the only record of what the database holds.
   */
  public void acceptGap(int partition, boolean dryRun) throws SQLException {
    String topic = config.topic();
    int partitions =
        cluster
            .partitions(topic)
            .orElseThrow(() -> new Refused("topic " + topic + " does not exist"));
    if (partition < 0 || partition >= partitions) {
      throw new Refused(topic + " has partitions 0-" + (partitions - 1) + ", not " + partition);
    }
    long logStart = cluster.startOffsets(topic, partitions).get(partition);
    TopicPartition tp = new TopicPartition(topic, partition);
    try (Connection c = connect()) {
      Long stored = new OffsetStore(config.groupId()).read(c, List.of(tp)).get(tp);
      if (stored == null || stored >= logStart) {
        throw new Refused(
            tp
                + ": no gap (stored offset "
                + stored
                + ", log start "
                + logStart
                + "): every record from the stored offset on is still in the topic");
      }
      out.printf(
          "%s: stored offset %d, log start %d: %d record(s) deleted by retention were never"
              + " stored%n",
          tp, stored, logStart, logStart - stored);
      if (dryRun) {
        out.println("dry run: nothing changed");
        return;
      }
      if (!new AcceptedGaps(config.groupId()).accept(c, topic, partition, stored, logStart)) {
        c.rollback();
        throw new Refused(tp + ": the stored offset moved meanwhile; run the command again");
      }
      c.commit();
      out.printf(
          "accepted: offsets %d-%d recorded in sink_gaps; the sink goes on from %d within a few"
              + " seconds%n",
          stored, logStart - 1, logStart);
    }
  }

  private Connection connect() throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", config.databaseUser());
    config.databasePassword().ifPresent(s -> p.setProperty("password", s.reveal()));
    p.setProperty("ApplicationName", "runlane-tools");
    Connection c = DriverManager.getConnection(config.databaseUrl(), p);
    c.setAutoCommit(false);
    return c;
  }
}
