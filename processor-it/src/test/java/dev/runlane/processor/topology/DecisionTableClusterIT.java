package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.embedded.EmbeddedRedisCluster;
import java.net.URI;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * The decision table's Redis rows ({@link DecisionTableIT#REDIS_ROWS}) on a real 3-primary Redis
 * Cluster (issue 41, D82): the same cells, the markers found on whichever primary holds their key.
 * One cluster for the class; each test's keys are placed on the next primary in turn, so the rows
 * run on every primary, and the class ends by checking that they did.
 */
class DecisionTableClusterIT extends DecisionTableIT {
  private static EmbeddedRedisCluster cluster;
  private static int tests;

  /** Only the Redis rows: the rest (no Redis, a dead Redis, body limits) ask no cluster. */
  @RegisterExtension
  static final ExecutionCondition REDIS_ROWS_ONLY =
      context -> {
        Class<?> c = context.getTestClass().orElseThrow();
        boolean enabled =
            REDIS_ROWS.contains(c)
                || (c == DecisionTableClusterIT.class && context.getTestMethod().isEmpty());
        return enabled
            ? ConditionEvaluationResult.enabled("a Redis row")
            : ConditionEvaluationResult.disabled("not a Redis row: runs on one node only");
      };

  @BeforeAll
  static void startCluster() {
    cluster = EmbeddedRedisCluster.start(3, false);
  }

  @AfterAll
  static void keysOnSeveralPrimariesThenStop() {
    try {
      long primariesWithKeys = cluster.primaries().stream().filter(p -> p.keyCount() > 0).count();
      assertThat(primariesWithKeys).as("the rows' keys spread over the primaries").isEqualTo(3);
    } finally {
      cluster.close();
    }
  }

  @Override
  URI redisUri() {
    return cluster.uri();
  }

  @Override
  UnifiedJedis newClient() {
    return RedisClusterClient.create(
        cluster.primaries().stream()
            .map(p -> new HostAndPort(p.host(), p.port()))
            .collect(Collectors.toSet()));
  }

  /** A prefix that puts this test's first key ({@code r1}) on the next primary in turn. */
  @Override
  String newPrefix() {
    int primary = tests++ % cluster.primaries().size();
    while (true) {
      String prefix = "test:" + UUID.randomUUID() + ":";
      if (cluster.primaryIndexOf(prefix + "r1") == primary) {
        return prefix;
      }
    }
  }
}
