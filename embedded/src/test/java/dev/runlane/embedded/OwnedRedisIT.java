package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

class OwnedRedisIT {

  @Test
  void restartLosesKeysAndStopKillsTheServer() {
    try (EmbeddedRedis redis = EmbeddedRedis.startOwned()) {
      assertThat(redis.owned()).isTrue();
      assertThat(redis.uri()).hasToString("redis://" + redis.host() + ":" + redis.port());
      int port = redis.port();
      try (Jedis jedis = connect(redis)) {
        assertThat(jedis.set("runlane:it:owned", "v")).isEqualTo("OK");
        assertThat(jedis.get("runlane:it:owned")).isEqualTo("v");
      }

      redis.restart();

      assertThat(redis.port()).isEqualTo(port);
      try (Jedis jedis = connect(redis)) {
        assertThat(jedis.ping()).isEqualTo("PONG");
        assertThat(jedis.get("runlane:it:owned")).isNull();
      }

      redis.stop();

      assertThat(redis.isRunning()).isFalse();
      assertThatThrownBy(
              () -> {
                try (Jedis jedis = connect(redis)) {
                  jedis.ping();
                }
              })
          .isInstanceOf(JedisConnectionException.class);
    }
  }

  @Test
  void refusesToStopARedisItDidNotStart() {
    try (EmbeddedRedis owned = EmbeddedRedis.startOwned()) {
      EmbeddedRedis given = EmbeddedRedis.resolveShared(owned.uri().toString());
      assertThat(given.owned()).isFalse();

      assertThatThrownBy(given::stop).isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(given::restart).isInstanceOf(IllegalStateException.class);
      given.close();

      try (Jedis jedis = connect(owned)) {
        assertThat(jedis.ping()).isEqualTo("PONG");
      }
    }
  }

  @Test
  void sharedRedisCannotBeStopped() {
    EmbeddedRedis shared = EmbeddedRedis.shared();
    assertThat(EmbeddedRedis.shared()).isSameAs(shared);

    assertThatThrownBy(shared::stop).isInstanceOf(IllegalStateException.class);
    shared.close();

    try (Jedis jedis = connect(shared)) {
      assertThat(jedis.ping()).isEqualTo("PONG");
    }
  }

  private static Jedis connect(EmbeddedRedis redis) {
    int timeout = (int) Duration.ofSeconds(2).toMillis();
    return new Jedis(
        redis.host(),
        redis.port(),
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(timeout)
            .socketTimeoutMillis(timeout)
            .autoNegotiateProtocol(false)
            .build());
  }
}
