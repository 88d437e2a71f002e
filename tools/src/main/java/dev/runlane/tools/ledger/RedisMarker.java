package dev.runlane.tools.ledger;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSocketFactory;

/**
 * Reads one request id's dedup marker as it is in Redis now, for {@code runlane trace}: a single
 * {@code GET} over the Redis protocol. Only the processor's dedup package holds a Redis client
 * (D58); a read-only look needs no client, and says why when it cannot look.
 *
 * <p>Configured like the processor: {@code REDIS_URL} ({@code redis://} or {@code rediss://}),
 * {@code REDIS_USERNAME}, {@code REDIS_PASSWORD}, {@code DEDUP_KEY_PREFIX}.
 */
final class RedisMarker {
  /** The processor's default {@code DEDUP_KEY_PREFIX}. */
  static final String DEFAULT_KEY_PREFIX = "runlane:dedup:";

  private static final int TIMEOUT_MS = 2_000;

  private final URI uri;
  private final String username;
  private final String password;
  private final String keyPrefix;

  RedisMarker(Map<String, String> env) {
    this.uri = URI.create(env.getOrDefault("REDIS_URL", "redis://localhost:6379"));
    String[] userInfo = userInfo(uri);
    this.username = env.getOrDefault("REDIS_USERNAME", userInfo[0]);
    this.password = env.getOrDefault("REDIS_PASSWORD", userInfo[1]);
    this.keyPrefix = env.getOrDefault("DEDUP_KEY_PREFIX", DEFAULT_KEY_PREFIX);
  }

  /** The key of {@code requestId}'s marker. */
  String key(String requestId) {
    return keyPrefix + requestId;
  }

  /** The marker's value, {@code (none)} without one, or why it could not be read. */
  String now(String requestId) {
    try (Socket socket = open()) {
      socket.setSoTimeout(TIMEOUT_MS);
      OutputStream out = socket.getOutputStream();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      if (password != null) {
        List<String> auth = new ArrayList<>(List.of("AUTH"));
        if (username != null) {
          auth.add(username);
        }
        auth.add(password);
        send(out, auth);
        String answer = reply(in);
        if (answer == null || answer.startsWith("-")) {
          return "unknown (Redis refused the credentials)";
        }
      }
      send(out, List.of("GET", key(requestId)));
      String value = reply(in);
      return value == null ? "(none)" : value;
    } catch (IOException e) {
      return "unknown (Redis at " + uri.getHost() + ":" + port() + " did not answer: " + e + ")";
    }
  }

  private Socket open() throws IOException {
    Socket socket =
        "rediss".equals(uri.getScheme()) ? SSLSocketFactory.getDefault().createSocket() : null;
    if (socket == null) {
      socket = new Socket();
    }
    socket.connect(new InetSocketAddress(uri.getHost(), port()), TIMEOUT_MS);
    return socket;
  }

  private int port() {
    return uri.getPort() > 0 ? uri.getPort() : 6379;
  }

  private static void send(OutputStream out, List<String> args) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.UTF_8));
    for (String a : args) {
      byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
      b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
      b.writeBytes(bytes);
      b.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
    }
    out.write(b.toByteArray());
    out.flush();
  }

  /** One reply: a bulk string's text, a simple string or error as its line, or null for nil. */
  private static String reply(InputStream in) throws IOException {
    String line = line(in);
    if (line.startsWith("$")) {
      int length = Integer.parseInt(line.substring(1));
      if (length < 0) {
        return null;
      }
      byte[] value = in.readNBytes(length + 2);
      return new String(value, 0, length, StandardCharsets.UTF_8);
    }
    return line.startsWith("+") ? line.substring(1) : line;
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("Redis closed the connection");
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  private static String[] userInfo(URI uri) {
    String info = uri.getRawUserInfo();
    if (info == null) {
      return new String[] {null, null};
    }
    int colon = info.indexOf(':');
    if (colon < 0) {
      return new String[] {null, decode(info)};
    }
    String user = decode(info.substring(0, colon));
    return new String[] {user.isEmpty() ? null : user, decode(info.substring(colon + 1))};
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
