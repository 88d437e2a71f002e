package dev.runlane.embedded;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One RESP command to a Redis node over a fresh socket: what the launchers need to assemble a
 * cluster or a sentinel group (CLUSTER MEET, ADDSLOTS, REPLICATE, INFO), without a Redis client in
 * the embedded module (only the processor's dedup package holds one, D58).
 */
final class Resp {
  private static final int TIMEOUT_MS = 2_000;

  private Resp() {}

  /** A {@code -ERR ...} reply. */
  static final class ErrorReply extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ErrorReply(String message) {
      super(message);
    }
  }

  /**
   * Sends {@code args} and returns the reply: a String (simple or bulk), a Long, a List, or null.
   *
   * @throws ErrorReply on an error reply
   * @throws UncheckedIOException if the node does not answer
   */
  static Object call(String host, int port, String... args) {
    return exchange(host, port, List.of(args));
  }

  /** {@link #call} on a server that needs {@code password} ({@code AUTH} first); null: none. */
  static Object callWithPassword(String host, int port, String password, String... args) {
    return password == null
        ? call(host, port, args)
        : exchange(host, port, List.of("AUTH", password), List.of(args));
  }

  /** Sends every command on one connection, and returns the last one's reply. */
  @SafeVarargs
  private static Object exchange(String host, int port, List<String>... commands) {
    String name = commands[commands.length - 1].get(0);
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
      socket.setSoTimeout(TIMEOUT_MS);
      OutputStream out = socket.getOutputStream();
      ByteArrayOutputStream command = new ByteArrayOutputStream();
      for (List<String> args : commands) {
        command.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String arg : args) {
          byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
          command.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
          command.writeBytes(bytes);
          command.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
      }
      out.write(command.toByteArray());
      out.flush();
      BufferedInputStream in = new BufferedInputStream(socket.getInputStream());
      Object reply = null;
      for (int i = 0; i < commands.length; i++) {
        reply = read(in);
      }
      return reply;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "redis-server on " + host + ":" + port + " did not answer " + name, e);
    }
  }

  /** {@link #call} for a reply that is text (INFO, CLUSTER NODES, ...). */
  static String text(String host, int port, String... args) {
    return String.valueOf(call(host, port, args));
  }

  private static Object read(InputStream in) throws IOException {
    int type = in.read();
    String line = line(in);
    switch (type) {
      case '+':
        return line;
      case '-':
        throw new ErrorReply(line);
      case ':':
        return Long.parseLong(line);
      case '$':
        int length = Integer.parseInt(line);
        if (length < 0) {
          return null;
        }
        byte[] bulk = in.readNBytes(length);
        line(in);
        return new String(bulk, StandardCharsets.UTF_8);
      case '*':
        int count = Integer.parseInt(line);
        if (count < 0) {
          return null;
        }
        List<Object> items = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          items.add(read(in));
        }
        return items;
      default:
        throw new IOException("not a RESP reply: " + (char) type + line);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = in.read(); b != '\r'; b = in.read()) {
      if (b < 0) {
        throw new IOException("connection closed mid-reply");
      }
      line.append((char) b);
    }
    in.read(); // '\n'
    return line.toString();
  }
}
