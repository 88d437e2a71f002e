package dev.runlane.sink.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;

/** Reads the offsets the sink stored with its rows: where each partition's next batch starts. */
public final class OffsetStore {
  private final String group;

  public OffsetStore(String group) {
    this.group = group;
  }

  /** The stored next offset of each partition that has one; partitions never written are absent. */
  public Map<TopicPartition, Long> read(Connection c, Collection<TopicPartition> partitions)
      throws SQLException {
    Map<TopicPartition, Long> out = new HashMap<>();
    Map<String, Set<Integer>> byTopic =
        partitions.stream()
            .collect(
                Collectors.groupingBy(
                    TopicPartition::topic,
                    Collectors.mapping(TopicPartition::partition, Collectors.toSet())));
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT kafka_partition, next_offset FROM sink_offsets"
                + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = ANY (?)")) {
      for (var topic : byTopic.entrySet()) {
        s.setString(1, group);
        s.setString(2, topic.getKey());
        s.setArray(3, c.createArrayOf("int4", topic.getValue().toArray(Integer[]::new)));
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            out.put(new TopicPartition(topic.getKey(), rs.getInt(1)), rs.getLong(2));
          }
        }
      }
    }
    c.commit();
    return out;
  }
}
