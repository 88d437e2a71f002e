package dev.runlane.processor.dedup;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * Where the dedup layer's Redis is, read from {@code REDIS_URL} (D82): one node ({@code redis://},
 * {@code rediss://}), a Redis Cluster by its seed nodes ({@code redis+cluster://h1:p1,h2:p2}), or a
 * primary found through Sentinel ({@code redis+sentinel://s1:26379,s2:26379/mymaster}). A scheme
 * ending in {@code s} ({@code rediss+cluster}) means TLS; user info, if any, gives the user name
 * and password, as for one node.
 *
 * @param nodes the node, the cluster's seeds, or the sentinels
 * @param master the name Sentinel knows the primary by; empty for the other kinds
 * @param database the database index of one node or a Sentinel primary; 0 for a cluster
 */
public record RedisEndpoint(
    Kind kind,
    List<HostAndPort> nodes,
    boolean tls,
    Optional<String> user,
    Optional<String> password,
    String master,
    int database) {

  /** How the processor reaches Redis. */
  public enum Kind {
    STANDALONE,
    CLUSTER,
    SENTINEL
  }

  /** Without the credentials. */
  @Override
  public String toString() {
    return kind
        + " "
        + nodes
        + (tls ? " tls" : "")
        + (master.isEmpty() ? "" : " master " + master)
        + (user.isPresent() || password.isPresent() ? " with credentials" : "");
  }

  private static final int DEFAULT_PORT = 6379;
  private static final int DEFAULT_SENTINEL_PORT = 26379;

  /** Whether {@code scheme} names a cluster or Sentinel, which need more than one host. */
  public static boolean multiNode(String scheme) {
    String s = scheme.toLowerCase(Locale.ROOT);
    return s.endsWith("+cluster") || s.endsWith("+sentinel");
  }

  /**
   * Reads {@code uri}.
   *
   * @throws IllegalArgumentException saying what is wrong, without the user info
   */
  public static RedisEndpoint parse(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    switch (scheme) {
      case "redis", "rediss":
        return standalone(uri, scheme.equals("rediss"));
      case "redis+cluster", "rediss+cluster":
        return multi(uri, Kind.CLUSTER, scheme.startsWith("rediss"), DEFAULT_PORT);
      case "redis+sentinel", "rediss+sentinel":
        return multi(uri, Kind.SENTINEL, scheme.startsWith("rediss"), DEFAULT_SENTINEL_PORT);
      default:
        throw new IllegalArgumentException(
            "has scheme '"
                + scheme
                + "', expected one of: redis, rediss, redis+cluster, rediss+cluster,"
                + " redis+sentinel, rediss+sentinel");
    }
  }

  private static RedisEndpoint standalone(URI uri, boolean tls) {
    return new RedisEndpoint(
        Kind.STANDALONE,
        List.of(JedisURIHelper.getHostAndPort(uri)),
        tls,
        Optional.ofNullable(JedisURIHelper.getUser(uri)),
        Optional.ofNullable(JedisURIHelper.getPassword(uri)),
        "",
        JedisURIHelper.hasDbIndex(uri) ? JedisURIHelper.getDBIndex(uri) : 0);
  }

  private static RedisEndpoint multi(URI uri, Kind kind, boolean tls, int defaultPort) {
    String authority = uri.getRawAuthority();
    if (authority == null || authority.isBlank()) {
      throw new IllegalArgumentException("has no host");
    }
    int at = authority.lastIndexOf('@');
    String userInfo = at < 0 ? null : authority.substring(0, at);
    List<HostAndPort> nodes = new ArrayList<>();
    for (String node : authority.substring(at + 1).split(",", -1)) {
      nodes.add(hostAndPort(node.trim(), defaultPort));
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    String master = "";
    int database = 0;
    if (kind == Kind.CLUSTER && !path.isEmpty() && !path.equals("/")) {
      throw new IllegalArgumentException("names a database, which a Redis Cluster does not have");
    }
    if (kind == Kind.SENTINEL) {
      String[] parts = path.replaceFirst("^/", "").split("/", -1);
      master = parts[0];
      if (master.isEmpty()) {
        throw new IllegalArgumentException("names no primary: end it with /<master name>");
      }
      if (parts.length > 1) {
        database = database(parts[1]);
      }
    }
    Optional<String> user = Optional.empty();
    Optional<String> password = Optional.empty();
    if (userInfo != null) {
      int colon = userInfo.indexOf(':');
      String u = colon < 0 ? userInfo : userInfo.substring(0, colon);
      user = u.isEmpty() ? Optional.empty() : Optional.of(decode(u));
      password = colon < 0 ? Optional.empty() : Optional.of(decode(userInfo.substring(colon + 1)));
    }
    return new RedisEndpoint(kind, List.copyOf(nodes), tls, user, password, master, database);
  }

  private static HostAndPort hostAndPort(String node, int defaultPort) {
    if (node.isEmpty()) {
      throw new IllegalArgumentException("has an empty host in its list");
    }
    int colon = node.lastIndexOf(':');
    if (colon < 0 || node.endsWith("]")) {
      return new HostAndPort(node, defaultPort);
    }
    String host = node.substring(0, colon);
    try {
      int port = Integer.parseInt(node.substring(colon + 1));
      if (host.isEmpty() || port < 1 || port > 65_535) {
        throw new NumberFormatException();
      }
      return new HostAndPort(host, port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("has a node that is not host:port: '" + node + "'");
    }
  }

  private static int database(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("has a database index that is not a number");
    }
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }
}
