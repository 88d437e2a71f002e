package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

class RedisUrlTest {

  @Test
  void givenRedisUrlIsUsedAsIsAndNotOwned() {
    EmbeddedRedis redis = EmbeddedRedis.resolveShared("redis://:secret@cache.internal:6380/2");

    assertThat(redis.owned()).isFalse();
    assertThat(redis.source()).isEqualTo(EmbeddedRedis.Source.REDIS_URL);
    assertThat(redis.uri()).isEqualTo(URI.create("redis://:secret@cache.internal:6380/2"));
    assertThat(redis.host()).isEqualTo("cache.internal");
    assertThat(redis.port()).isEqualTo(6380);
    assertThatThrownBy(redis::stop).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void defaultsThePortAndTheScheme() {
    EmbeddedRedis redis = EmbeddedRedis.resolveShared("cache.internal");

    assertThat(redis.uri()).isEqualTo(URI.create("redis://cache.internal"));
    assertThat(redis.port()).isEqualTo(6379);
  }

  @Test
  void rejectsOtherSchemes() {
    assertThatThrownBy(() -> EmbeddedRedis.parseRedisUrl("http://cache.internal:6379"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redis://");
  }
}
