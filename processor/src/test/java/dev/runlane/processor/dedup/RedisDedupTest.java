package dev.runlane.processor.dedup;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A Redis that is not there, in each topology, is "unavailable" to the caller, never another
 * exception: anything else would kill the stream thread (D82). Nothing listens on port 1.
 */
class RedisDedupTest {

  @Test
  void anUnreachableClusterOrSentinelIsUnavailableNotAnError() {
    for (String url :
        List.of(
            "redis://127.0.0.1:1",
            "redis+cluster://127.0.0.1:1,127.0.0.1:2",
            "redis+sentinel://127.0.0.1:1/mymaster")) {
      try (RedisDedup dedup =
          new RedisDedup(
              new RedisDedup.RedisDedupSettings(
                  URI.create(url),
                  "k:",
                  Duration.ofSeconds(60),
                  Duration.ofHours(24),
                  Duration.ofMillis(200),
                  Duration.ofSeconds(1)),
              new SimpleMeterRegistry())) {
        EventKey event = new EventKey("r1", "run-1");
        assertThatThrownBy(
                () -> dedup.claim(List.of(new ClaimRequest("0_0", List.of(), List.of(event)))))
            .as(url)
            .isInstanceOf(DedupUnavailableException.class);
        assertThatThrownBy(() -> dedup.markDone("0_0", List.of(new Marker(event, false))))
            .as(url)
            .isInstanceOf(DedupUnavailableException.class);
      }
    }
  }
}
