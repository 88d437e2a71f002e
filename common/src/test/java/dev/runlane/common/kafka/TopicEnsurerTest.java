package dev.runlane.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.CreateTopicsResult.TopicMetadataAndConfig;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.KafkaFutureImpl;
import org.junit.jupiter.api.Test;

class TopicEnsurerTest {

  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final TopicSettings SETTINGS = new TopicSettings(3, (short) -1);

  @Test
  void createsOnlyMissingTopics() {
    FakeAdmin fake = new FakeAdmin(Set.of("a"), Map.of());

    TopicEnsurer.ensure(
        fake.admin(),
        List.of(TopicEnsurer.plain("a", SETTINGS), TopicEnsurer.plain("b", SETTINGS)),
        TIMEOUT);

    assertThat(fake.created).extracting(NewTopic::name).containsExactly("b");
  }

  @Test
  void waitsWhileTheBrokerHasNotAppliedTheCreationYet() {
    FakeAdmin fake = new FakeAdmin(Set.of(), Map.of());
    fake.unknownDescribes = 2;

    TopicEnsurer.ensure(fake.admin(), List.of(TopicEnsurer.plain("b", SETTINGS)), TIMEOUT);

    assertThat(fake.created).extracting(NewTopic::name).containsExactly("b");
    assertThat(fake.describes).isEqualTo(3);
  }

  @Test
  void waitsUntilTheLeaderServesEveryNewPartition() {
    FakeAdmin fake = new FakeAdmin(Set.of("a"), Map.of());
    fake.unservedListOffsets = 2;

    TopicEnsurer.ensure(
        fake.admin(),
        List.of(TopicEnsurer.plain("a", SETTINGS), TopicEnsurer.plain("b", SETTINGS)),
        TIMEOUT);

    assertThat(fake.listOffsets).isEqualTo(3);
    assertThat(fake.offsetsAsked)
        .containsExactlyInAnyOrder(
            new TopicPartition("b", 0), new TopicPartition("b", 1), new TopicPartition("b", 2));
  }

  @Test
  void doesNothingWhenAllExist() {
    FakeAdmin fake = new FakeAdmin(Set.of("a", "b"), Map.of());

    TopicEnsurer.ensure(
        fake.admin(),
        List.of(TopicEnsurer.plain("a", SETTINGS), TopicEnsurer.plain("b", SETTINGS)),
        TIMEOUT);

    assertThat(fake.created).isEmpty();
  }

  @Test
  void aTopicCreatedConcurrentlyCountsAsCreatedAndIsWaitedFor() {
    FakeAdmin fake = new FakeAdmin(Set.of(), Map.of("a", new TopicExistsException("exists")));

    TopicEnsurer.ensure(fake.admin(), List.of(TopicEnsurer.plain("a", SETTINGS)), TIMEOUT);

    assertThat(fake.created).extracting(NewTopic::name).containsExactly("a");
    // Another instance made it a moment ago: its partitions may not be served yet either.
    assertThat(fake.offsetsAsked)
        .containsExactlyInAnyOrder(
            new TopicPartition("a", 0), new TopicPartition("a", 1), new TopicPartition("a", 2));
  }

  @Test
  void explainsMissingCreatePermission() {
    FakeAdmin fake =
        new FakeAdmin(
            Set.of(),
            Map.of(
                "sume.runs", new TopicAuthorizationException(Set.of("sume.runs")),
                "sume.events", new ClusterAuthorizationException("no")));

    assertThatThrownBy(
            () ->
                TopicEnsurer.ensure(
                    fake.admin(),
                    List.of(
                        TopicEnsurer.plain("sume.events", SETTINGS),
                        TopicEnsurer.compacted("sume.runs", SETTINGS)),
                    TIMEOUT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sume.events")
        .hasMessageContaining("sume.runs")
        .hasMessageContaining("cleanup.policy=compact")
        .hasMessageContaining("may not create")
        .hasMessageContaining("created beforehand");
  }

  @Test
  void compactedAndPlainTopicsCarryTheSettings() {
    NewTopic compacted = TopicEnsurer.compacted("sume.runs", new TopicSettings(12, (short) 3));
    NewTopic plain = TopicEnsurer.plain("sume.events", TopicSettings.defaults());

    assertThat(compacted.numPartitions()).isEqualTo(12);
    assertThat(compacted.replicationFactor()).isEqualTo((short) 3);
    assertThat(compacted.configs()).containsEntry("cleanup.policy", "compact");
    assertThat(plain.numPartitions()).isEqualTo(12);
    assertThat(plain.replicationFactor()).isEqualTo((short) -1);
    assertThat(plain.configs()).isNullOrEmpty();
  }

  /** An {@link Admin} answering listTopics and createTopics from memory. */
  private static final class FakeAdmin {
    final Set<String> existing;
    final Map<String, RuntimeException> failures;
    final List<NewTopic> created = new ArrayList<>();
    int unknownDescribes;
    int describes;
    int unservedListOffsets;
    int listOffsets;
    final Set<TopicPartition> offsetsAsked = new HashSet<>();

    FakeAdmin(Set<String> existing, Map<String, RuntimeException> failures) {
      this.existing = existing;
      this.failures = failures;
    }

    Admin admin() {
      return (Admin)
          Proxy.newProxyInstance(
              Admin.class.getClassLoader(),
              new Class<?>[] {Admin.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "listTopics":
                    return listTopics();
                  case "createTopics":
                    @SuppressWarnings("unchecked")
                    Collection<NewTopic> topics = (Collection<NewTopic>) args[0];
                    return createTopics(topics);
                  case "describeTopics":
                    @SuppressWarnings("unchecked")
                    Collection<String> names = (Collection<String>) args[0];
                    return describeTopics(names);
                  case "listOffsets":
                    @SuppressWarnings("unchecked")
                    Map<TopicPartition, OffsetSpec> asked =
                        (Map<TopicPartition, OffsetSpec>) args[0];
                    return listOffsets(asked);
                  case "close":
                    return null;
                  default:
                    throw new UnsupportedOperationException(method.getName());
                }
              });
    }

    private ListTopicsResult listTopics() throws ReflectiveOperationException {
      Map<String, TopicListing> listings = new HashMap<>();
      existing.forEach(n -> listings.put(n, new TopicListing(n, Uuid.randomUuid(), false)));
      // The constructor is package-private; tests run on the class path.
      Constructor<ListTopicsResult> c =
          ListTopicsResult.class.getDeclaredConstructor(KafkaFuture.class);
      c.setAccessible(true);
      return c.newInstance(KafkaFuture.completedFuture(listings));
    }

    /** Every partition of a created topic has a leader (the broker applied the creation). */
    private DescribeTopicsResult describeTopics(Collection<String> names) {
      Node leader = new Node(1, "localhost", 9092);
      Map<String, KafkaFuture<TopicDescription>> descriptions = new HashMap<>();
      if (describes++ < unknownDescribes) {
        for (String name : names) {
          KafkaFutureImpl<TopicDescription> f = new KafkaFutureImpl<>();
          f.completeExceptionally(new UnknownTopicOrPartitionException("not yet"));
          descriptions.put(name, f);
        }
        return new DescribeTopicsResult(null, descriptions) {};
      }
      for (String name : names) {
        List<TopicPartitionInfo> partitions = new ArrayList<>();
        for (int i = 0; i < SETTINGS.partitions(); i++) {
          partitions.add(new TopicPartitionInfo(i, leader, List.of(leader), List.of(leader)));
        }
        descriptions.put(
            name, KafkaFuture.completedFuture(new TopicDescription(name, false, partitions)));
      }
      return new DescribeTopicsResult(null, descriptions) {};
    }

    /** Each partition at offset 0, once the broker serves it (after unservedListOffsets calls). */
    private ListOffsetsResult listOffsets(Map<TopicPartition, OffsetSpec> asked) {
      offsetsAsked.addAll(asked.keySet());
      boolean served = listOffsets++ >= unservedListOffsets;
      Map<TopicPartition, KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo>> results =
          new HashMap<>();
      for (TopicPartition tp : asked.keySet()) {
        KafkaFutureImpl<ListOffsetsResult.ListOffsetsResultInfo> f = new KafkaFutureImpl<>();
        if (served) {
          f.complete(new ListOffsetsResult.ListOffsetsResultInfo(0, -1, Optional.empty()));
        } else {
          f.completeExceptionally(new NotLeaderOrFollowerException("not yet"));
        }
        results.put(tp, f);
      }
      return new ListOffsetsResult(results);
    }

    private CreateTopicsResult createTopics(Collection<NewTopic> topics) {
      Map<String, KafkaFuture<TopicMetadataAndConfig>> results = new HashMap<>();
      for (NewTopic t : topics) {
        created.add(t);
        KafkaFutureImpl<TopicMetadataAndConfig> f = new KafkaFutureImpl<>();
        Optional.ofNullable(failures.get(t.name()))
            .ifPresentOrElse(f::completeExceptionally, () -> f.complete(null));
        results.put(t.name(), f);
      }
      return new CreateTopicsResult(results) {};
    }
  }
}
