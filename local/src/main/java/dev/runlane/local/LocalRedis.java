package dev.runlane.local;

import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.EmbeddedRedisCluster;
import java.net.URI;
import java.util.Locale;

/**
 * The Redis a local stack's dedup layer uses: a given one, a 3-primary Redis Cluster of the bundled
 * {@code redis-server} that the stack starts and stops ({@code runlane up --redis-cluster}, D82),
 * or the shared one ({@code REDIS_URL}, else {@code localhost:6379}, else the bundled binary).
 *
 * @param uri the processor's {@code REDIS_URL}
 * @param description the URI and where it came from, for the banner and logs
 * @param cluster the cluster the stack started, or null
 */
record LocalRedis(URI uri, String description, EmbeddedRedisCluster cluster)
    implements AutoCloseable {

  static LocalRedis resolve(URI given, boolean startCluster) {
    if (startCluster) {
      if (given != null) {
        // The stack would own a cluster nobody uses, or use a Redis nobody asked for.
        throw new IllegalArgumentException("a Redis Cluster of its own or a given Redis, not both");
      }
      EmbeddedRedisCluster started = EmbeddedRedisCluster.start(3, false);
      return new LocalRedis(
          started.uri(), started.uri() + " (3-primary cluster, bundled redis-server)", started);
    }
    if (given != null) {
      return new LocalRedis(given, given + " (given)", null);
    }
    EmbeddedRedis shared = EmbeddedRedis.shared();
    return new LocalRedis(
        shared.uri(),
        shared.uri() + " (" + shared.source().name().toLowerCase(Locale.ROOT) + ")",
        null);
  }

  /** Stops the cluster the stack started; a given or shared Redis is left alone. */
  @Override
  public void close() {
    if (cluster != null) {
      cluster.close();
    }
  }
}
