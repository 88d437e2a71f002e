package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.embedded.Infra;
import dev.runlane.embedded.RealInfra;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * What a task reads of its input as it starts: held events' bodies (D49), the records at the held
 * offsets or a clear failure when the input no longer has them; and the last record its last commit
 * does not cover (D67).
 */
@RealInfra
class InputRecordsIT {
  @Test
  void readsTheRecordsAtTheHeldOffsetsAndFailsClearlyWhenTheyAreGone(Infra infra) throws Exception {
    String topic = infra.uniqueName("held-input");
    TopicPartition partition = new TopicPartition(topic, 0);
    Map<String, Object> client = Map.of("bootstrap.servers", infra.bootstrapServers());
    try (Admin admin = Admin.create(client);
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(client, new StringSerializer(), new StringSerializer())) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      for (int i = 0; i < 10; i++) {
        ProducerRecord<String, String> r =
            new ProducerRecord<>(topic, 0, 1_000L + i, "run-" + i, "body-" + i);
        r.headers().add("request_id", ("req-" + i).getBytes(StandardCharsets.UTF_8));
        producer.send(r).get();
      }
      InputRecords reader = new InputRecords(client, "held-reader-test");

      Map<Long, ConsumerRecord<byte[], byte[]>> read =
          reader.read(partition, new TreeSet<>(List.of(2L, 3L, 7L)));
      assertThat(read).containsOnlyKeys(2L, 3L, 7L);
      assertThat(new String(read.get(7L).value(), StandardCharsets.UTF_8)).isEqualTo("body-7");
      assertThat(new String(read.get(7L).key(), StandardCharsets.UTF_8)).isEqualTo("run-7");
      assertThat(read.get(7L).timestamp()).isEqualTo(1_007L);
      assertThat(read.get(3L).headers().lastHeader("request_id").value())
          .isEqualTo("req-3".getBytes(StandardCharsets.UTF_8));

      assertThatThrownBy(() -> reader.read(partition, new TreeSet<>(List.of(9L, 10L))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("which ends at 10");

      admin.deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(5))).all().get();
      assertThatThrownBy(() -> reader.read(partition, new TreeSet<>(List.of(3L, 6L))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("no longer in " + partition);
    }
  }

  @Test
  void findsTheLastRecordTheGroupsCommitDoesNotCoverPastMarkersAndAbortedRecords(Infra infra)
      throws Exception {
    String topic = infra.uniqueName("tail-input");
    String group = infra.uniqueName("tail-app");
    TopicPartition partition = new TopicPartition(topic, 0);
    Map<String, Object> client = Map.of("bootstrap.servers", infra.bootstrapServers());
    InputRecords reader = new InputRecords(client, "tail-reader-test");
    try (Admin admin = Admin.create(client);
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(client, new StringSerializer(), new StringSerializer())) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      assertThat(reader.lastUncommitted(partition, group)).as("an empty input").isEmpty();
      for (int i = 0; i < 5; i++) {
        producer.send(new ProducerRecord<>(topic, 0, "run-" + i, "body-" + i)).get();
      }
      assertThat(reader.lastUncommitted(partition, group)).as("nothing committed").hasValue(4);

      commit(admin, group, partition, 5);
      assertThat(reader.lastUncommitted(partition, group)).as("all committed").isEmpty();

      Map<String, Object> transactional = new HashMap<>(client);
      transactional.put("transactional.id", group + "-tx");
      try (KafkaProducer<String, String> tx =
          new KafkaProducer<>(transactional, new StringSerializer(), new StringSerializer())) {
        tx.initTransactions();
        tx.beginTransaction();
        tx.send(new ProducerRecord<>(topic, 0, "run-5", "body-5")); // 5, its marker at 6
        tx.commitTransaction();
        tx.beginTransaction();
        for (int i = 0; i < 40; i++) {
          tx.send(new ProducerRecord<>(topic, 0, "aborted", "aborted")); // 7 to 46
        }
        tx.flush();
        tx.abortTransaction(); // its marker at 47
      }
      assertThat(reader.lastUncommitted(partition, group))
          .as("behind a commit marker, 40 aborted records and an abort marker")
          .hasValue(5);

      commit(admin, group, partition, 7);
      assertThat(reader.lastUncommitted(partition, group))
          .as("what follows the commit was aborted")
          .isEmpty();
    }
  }

  private static void commit(Admin admin, String group, TopicPartition partition, long offset)
      throws Exception {
    admin
        .alterConsumerGroupOffsets(group, Map.of(partition, new OffsetAndMetadata(offset)))
        .all()
        .get();
  }
}
