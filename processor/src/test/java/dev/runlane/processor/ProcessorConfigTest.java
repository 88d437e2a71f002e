package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.common.config.ConfigException;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.RedisEndpoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

class ProcessorConfigTest {

  @Test
  void defaultsFollowTheDesign() {
    ProcessorConfig c = ProcessorConfig.fromEnv(Map.of());
    assertThat(c.bootstrapServers()).isEqualTo("localhost:9092");
    assertThat(c.redisUri().toString()).isEqualTo("redis://localhost:6379");
    assertThat(c.port()).isEqualTo(9081);
    assertThat(c.applicationId()).isEqualTo("runlane-processor");
    assertThat(c.stateDir().toString()).isEqualTo("./data/processor");
    assertThat(c.topics().webhooks()).isEqualTo("sume.webhooks");
    assertThat(c.topicSettings().partitions()).isEqualTo(12);
    assertThat(c.claimTtl()).isEqualTo(Duration.ofSeconds(60));
    assertThat(c.doneTtl()).isEqualTo(Duration.ofHours(24));
    assertThat(c.redisFailureMode()).isEqualTo(RedisFailureMode.DEGRADE);
    assertThat(c.processingGuarantee()).isEqualTo("exactly_once_v2");
    assertThat(c.commitInterval()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.transactionalStateStores()).isTrue();
  }

  @Test
  void transactionalStateStoresReachStreamsAndCanBeSwitchedOff() {
    HostInfo self = new HostInfo("localhost", 9081);
    assertThat(
            StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), self)
                .get(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG))
        .isEqualTo(true);
    ProcessorConfig off =
        ProcessorConfig.fromEnv(Map.of("PROCESSOR_TRANSACTIONAL_STATE_STORES", "false"));
    assertThat(StreamsSettings.of(off, self).get(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG))
        .isEqualTo(false);
  }

  @Test
  void theRunStoresShareOneRocksDbBudgetUnlessItIsZero() {
    HostInfo self = new HostInfo("localhost", 9081);
    var bounded = StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), self);
    assertThat(bounded.get(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG))
        .isEqualTo(dev.runlane.processor.runs.RunStoreMemory.class);
    assertThat(bounded.get(dev.runlane.processor.runs.RunStoreMemory.BYTES_CONFIG))
        .isEqualTo(256L * 1024 * 1024);
    var streamsDefaults =
        StreamsSettings.of(
            ProcessorConfig.fromEnv(Map.of("PROCESSOR_ROCKSDB_MEMORY_MB", "0")), self);
    assertThat(streamsDefaults).doesNotContainKey(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG);

    assertThatThrownBy(() -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_ROCKSDB_MEMORY_MB", "8")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_ROCKSDB_MEMORY_MB=8 must be 0")
        .hasMessageContaining("at least 16");
  }

  @Test
  void aGroupInstanceIdMakesEachStreamThreadAStaticMember() {
    HostInfo self = new HostInfo("localhost", 9081);
    StreamsConfig dynamic =
        new StreamsConfig(StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), self));
    assertThat(dynamic.getMainConsumerConfigs("group", "client", 0))
        .doesNotContainKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);

    StreamsConfig fixed =
        new StreamsConfig(
            StreamsSettings.of(
                ProcessorConfig.fromEnv(
                    Map.of(
                        "PROCESSOR_GROUP_INSTANCE_ID", "runlane-processor-1",
                        "PROCESSOR_THREADS", "2")),
                self));
    assertThat(fixed.getMainConsumerConfigs("group", "client", 1))
        .containsEntry(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "runlane-processor-1-1");
    // Only the group's members are static; the restore consumer has no group.
    assertThat(fixed.getRestoreConsumerConfigs("client"))
        .doesNotContainKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);

    assertThatThrownBy(
            () -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_GROUP_INSTANCE_ID", "pod/1")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_GROUP_INSTANCE_ID='pod/1' must be 1-240 characters");
  }

  @Test
  void aShutdownStaysInTheGroupUnlessToldToLeaveIt() {
    assertThat(ProcessorConfig.fromEnv(Map.of()).shutdownLeavesGroup()).isFalse();
    assertThat(
            ProcessorConfig.fromEnv(Map.of("PROCESSOR_SHUTDOWN_LEAVES_GROUP", "true"))
                .shutdownLeavesGroup())
        .isTrue();
    assertThatThrownBy(
            () -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_SHUTDOWN_LEAVES_GROUP", "sometimes")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_SHUTDOWN_LEAVES_GROUP='sometimes' is not a boolean");
  }

  @Test
  void theMainConsumerWaitsForAFullerFetchButNotLong() {
    StreamsConfig streams =
        new StreamsConfig(
            StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), new HostInfo("localhost", 9081)));
    Map<String, Object> main = streams.getMainConsumerConfigs("group", "client", 0);
    assertThat(main)
        .containsEntry(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 32 * 1024)
        .containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
    // Restoring reads as fast as the broker answers: a start must not wait on these.
    assertThat(streams.getRestoreConsumerConfigs("client"))
        .doesNotContainKeys(
            ConsumerConfig.FETCH_MIN_BYTES_CONFIG, ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG);
  }

  @Test
  void everyClientStreamsMakesLeavesItsSocketBuffersToTheKernel() {
    StreamsConfig streams =
        new StreamsConfig(
            StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), new HostInfo("localhost", 9081)));
    // A fixed receive buffer dropped fetch responses and stalled the stream thread ~200 ms (D34).
    for (Map<String, Object> client :
        List.of(
            streams.getMainConsumerConfigs("group", "client", 0),
            streams.getRestoreConsumerConfigs("client"),
            streams.getGlobalConsumerConfigs("client"),
            streams.getProducerConfigs("client"),
            streams.getAdminConfigs("client"))) {
      assertThat(client)
          .containsEntry(CommonClientConfigs.RECEIVE_BUFFER_CONFIG, -1)
          .containsEntry(CommonClientConfigs.SEND_BUFFER_CONFIG, -1);
    }
  }

  @Test
  void reportsEveryBadVariableAtOnce() {
    assertThatThrownBy(
            () ->
                ProcessorConfig.fromEnv(
                    Map.of(
                        "PROCESSOR_PORT", "abc",
                        "REDIS_URL", "http://x",
                        "REDIS_FAILURE_MODE", "panic",
                        "PROCESSING_GUARANTEE", "exactly_once")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_PORT")
        .hasMessageContaining("REDIS_URL")
        .hasMessageContaining("REDIS_FAILURE_MODE")
        .hasMessageContaining("PROCESSING_GUARANTEE");
  }

  @Test
  void aClusterOrSentinelRedisUrlIsReadWithItsSeedsTlsAndCredentials() {
    RedisEndpoint cluster =
        RedisEndpoint.parse(
            ProcessorConfig.fromEnv(
                    Map.of("REDIS_URL", "rediss+cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2"))
                .redisUri());
    assertThat(cluster.kind()).isEqualTo(RedisEndpoint.Kind.CLUSTER);
    assertThat(cluster.nodes()).hasToString("[10.0.0.1:7000, 10.0.0.2:6379]");
    assertThat(cluster.tls()).isTrue();
    assertThat(cluster.user()).contains("app");
    assertThat(cluster.password()).contains("s@cret");
    assertThat(cluster.toString()).doesNotContain("cret");
    RedisEndpoint sentinel =
        RedisEndpoint.parse(
            ProcessorConfig.fromEnv(Map.of("REDIS_URL", "redis+sentinel://s1,s2:26380/dedup"))
                .redisUri());
    assertThat(sentinel.kind()).isEqualTo(RedisEndpoint.Kind.SENTINEL);
    assertThat(sentinel.nodes()).hasToString("[s1:26379, s2:26380]");
    assertThat(sentinel.master()).isEqualTo("dedup");
  }

  @Test
  void aBadClusterOrSentinelRedisUrlStopsTheStartNamingTheVariableNotThePassword() {
    for (String bad :
        List.of(
            "redis+cluster://:hunter2@h1:7000,h2:port",
            "redis+cluster://:hunter2@h1:7000,,h2:7001",
            "redis+cluster://:hunter2@h1:7000/3",
            "redis+sentinel://:hunter2@s1:26379")) {
      assertThatThrownBy(() -> ProcessorConfig.fromEnv(Map.of("REDIS_URL", bad)))
          .as(bad)
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("REDIS_URL")
          .hasMessageNotContaining("hunter2");
    }
  }

  @Test
  void aRedisTimeoutThatCouldOutlastTheTransactionIsRefused() {
    assertThatThrownBy(() -> ProcessorConfig.fromEnv(Map.of("REDIS_TIMEOUT_MS", "5000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("REDIS_TIMEOUT_MS");
  }

  @Test
  void slowMustBeBelowTheTimeout() {
    assertThatThrownBy(
            () ->
                ProcessorConfig.fromEnv(
                    Map.of("REDIS_SLOW_MS", "1000", "REDIS_TIMEOUT_MS", "1000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("REDIS_SLOW_MS=1000 must be below REDIS_TIMEOUT_MS=1000");
    assertThat(ProcessorConfig.fromEnv(Map.of()).redisSlow()).isEqualTo(Duration.ofMillis(250));
  }

  @Test
  void aClaimTtlShorterThanTwoRedisTimeoutsIsRefused() {
    assertThatThrownBy(
            () ->
                ProcessorConfig.fromEnv(
                    Map.of("DEDUP_CLAIM_TTL_SECONDS", "1", "REDIS_TIMEOUT_MS", "1000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("DEDUP_CLAIM_TTL_SECONDS");
  }

  @Test
  void aCommitIntervalPastTheTransactionTimeoutIsRefusedByItsName() {
    assertThatThrownBy(
            () -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_COMMIT_INTERVAL_MS", "15000")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "PROCESSOR_COMMIT_INTERVAL_MS='15000' is not a number of milliseconds (10-10000)");
    assertThat(
            ProcessorConfig.fromEnv(Map.of("PROCESSOR_COMMIT_INTERVAL_MS", "10000"))
                .commitInterval())
        .isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aClaimMustOutliveThreeBatchIntervals() {
    assertThatThrownBy(
            () ->
                ProcessorConfig.fromEnv(
                    Map.of("DEDUP_CLAIM_TTL_SECONDS", "2", "PROCESSOR_BATCH_INTERVAL_MS", "700")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "DEDUP_CLAIM_TTL_SECONDS must be at least three times PROCESSOR_BATCH_INTERVAL_MS");
    assertThat(
            ProcessorConfig.fromEnv(
                    Map.of("DEDUP_CLAIM_TTL_SECONDS", "2", "PROCESSOR_BATCH_INTERVAL_MS", "600"))
                .claimTtl())
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aShortDoneTtlIsAcceptedWithAWarningOnly() {
    ProcessorConfig c = ProcessorConfig.fromEnv(Map.of("DEDUP_DONE_TTL_SECONDS", "3600"));
    assertThat(c.doneTtl()).isEqualTo(Duration.ofHours(1));
    assertThat(c.warnings()).singleElement().asString().contains("DEDUP_DONE_TTL_SECONDS");
    assertThat(ProcessorConfig.fromEnv(Map.of()).warnings()).isEmpty();
  }

  @Test
  void theStreamsProducerCompressesAsConfigured() {
    HostInfo self = new HostInfo("localhost", 9081);
    assertThat(
            new StreamsConfig(StreamsSettings.of(ProcessorConfig.fromEnv(Map.of()), self))
                .getProducerConfigs("client"))
        .containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
    ProcessorConfig snappy =
        ProcessorConfig.fromEnv(Map.of("PROCESSOR_PRODUCER_COMPRESSION", "snappy"));
    assertThat(new StreamsConfig(StreamsSettings.of(snappy, self)).getProducerConfigs("client"))
        .containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "snappy");
    assertThatThrownBy(
            () -> ProcessorConfig.fromEnv(Map.of("PROCESSOR_PRODUCER_COMPRESSION", "lz5")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("PROCESSOR_PRODUCER_COMPRESSION='lz5' is not one of");
  }

  @Test
  void blockModeIsCaseInsensitive() {
    assertThat(ProcessorConfig.fromEnv(Map.of("REDIS_FAILURE_MODE", "block")).redisFailureMode())
        .isEqualTo(RedisFailureMode.BLOCK);
  }

  @Test
  void aRedisPasswordIsOneValueCommasIncludedAndNeverShown() {
    ProcessorConfig config = ProcessorConfig.fromEnv(Map.of("REDIS_PASSWORD", "ab,cd"));

    assertThat(config.redisPassword().orElseThrow().reveal()).isEqualTo("ab,cd");
    assertThat(config.toString()).doesNotContain("ab,cd");
  }

  @Test
  void sentinelsOwnCredentialsAreReadForSentinelAndRefusedForAnythingElse() {
    ProcessorConfig config =
        ProcessorConfig.fromEnv(
            Map.of(
                "REDIS_URL", "redis+sentinel://s1:26379/dedup",
                "REDIS_SENTINEL_USERNAME", "watcher",
                "REDIS_SENTINEL_PASSWORD", "s3,cret"));
    assertThat(config.redisDedupSettings().sentinelUsername()).contains("watcher");
    assertThat(config.redisDedupSettings().sentinelPassword().orElseThrow().reveal())
        .isEqualTo("s3,cret");
    assertThat(config.toString()).doesNotContain("s3,cret");

    assertThatThrownBy(
            () ->
                ProcessorConfig.fromEnv(
                    Map.of(
                        "REDIS_URL", "redis+cluster://h1:6379",
                        "REDIS_SENTINEL_PASSWORD", "s3cret")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("REDIS_SENTINEL_PASSWORD is set but REDIS_URL is not")
        .hasMessageNotContaining("s3cret");
  }
}
