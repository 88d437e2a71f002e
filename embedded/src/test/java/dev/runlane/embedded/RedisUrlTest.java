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
  void credentialsNeverShowInToStringOrMessages() {
    EmbeddedRedis redis = EmbeddedRedis.resolveShared("redis://alice:s3cret@cache.internal:6380/2");

    assertThat(redis.toString()).doesNotContain("s3cret").doesNotContain("alice");
    assertThat(redis.toString()).contains("redis://***@cache.internal:6380/2");
    assertThatThrownBy(redis::stop).hasMessageNotContaining("s3cret");
    assertThatThrownBy(() -> EmbeddedRedis.parseRedisUrl("http://alice:s3cret@cache.internal"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageNotContaining("s3cret");
    assertThatThrownBy(() -> EmbeddedRedis.parseRedisUrl("redis://alice:s3cret@cache internal"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageNotContaining("s3cret")
        .hasNoCause();
  }

  @Test
  void redactionKeepsUrlsWithoutCredentials() {
    assertThat(EmbeddedRedis.redacted(URI.create("redis://cache.internal:6379/0?x=a@b")))
        .isEqualTo("redis://cache.internal:6379/0?x=a@b");
    assertThat(EmbeddedRedis.redacted("user:pw@cache.internal")).isEqualTo("***@cache.internal");
  }

  @Test
  void rejectsOtherSchemes() {
    assertThatThrownBy(() -> EmbeddedRedis.parseRedisUrl("http://cache.internal:6379"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redis://");
  }
}
