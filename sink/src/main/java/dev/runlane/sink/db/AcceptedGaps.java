package dev.runlane.sink.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The {@code sink_gaps} table: ranges of the topic that retention deleted before the sink stored
 * them, accepted by an operator; accepting one is the only way a stored offset skips records (D63).
 */
public final class AcceptedGaps {
  private static final String MOVE =
      "UPDATE sink_offsets SET next_offset = ?, updated_at = now()"
          + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = ? AND next_offset = ?";

  private static final String RECORD =
      "INSERT INTO sink_gaps (consumer_group, topic, kafka_partition, from_offset, to_offset)"
          + " VALUES (?, ?, ?, ?, ?)";

  private final String group;

  public AcceptedGaps(String group) {
    this.group = group;
  }

  /**
   * Moves the partition's stored offset from {@code from} to {@code to} and records the move, in
   * the caller's transaction: forward past records retention deleted, or back to where a topic made
   * again (or truncated) goes on.
   *
   * @return false when the stored offset is no longer {@code from} (nothing changed)
   */
  public boolean accept(Connection c, String topic, int partition, long from, long to)
      throws SQLException {
    if (to == from || to < 0) {
      throw new IllegalArgumentException("no move: " + from + " -> " + to);
    }
    try (PreparedStatement move = c.prepareStatement(MOVE)) {
      move.setLong(1, to);
      move.setString(2, group);
      move.setString(3, topic);
      move.setInt(4, partition);
      move.setLong(5, from);
      if (move.executeUpdate() != 1) {
        return false;
      }
    }
    try (PreparedStatement record = c.prepareStatement(RECORD)) {
      record.setString(1, group);
      record.setString(2, topic);
      record.setInt(3, partition);
      record.setLong(4, from);
      record.setLong(5, to);
      record.executeUpdate();
    }
    return true;
  }
}
