package dev.runlane.processor.runs;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.runlane.common.config.Secret;
import dev.runlane.common.http.AdminServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;

/**
 * Lets a request through to {@code next} only with {@code Authorization: Bearer <token>} when a
 * token is configured ({@code PROCESSOR_RUNS_TOKEN}); with none, every request passes, as before.
 * {@code GET /runs/{id}} answers a run's data, which the admin port's other paths (health, metrics)
 * do not (D80). The comparison takes the same time whatever matches.
 */
public final class BearerGuard implements HttpHandler {
  static final String SCHEME = "Bearer ";

  private final Optional<Secret> token;
  private final HttpHandler next;

  public BearerGuard(Optional<Secret> token, HttpHandler next) {
    this.token = token;
    this.next = next;
  }

  /** The header value that passes this guard, for the relay between processors. */
  static Optional<String> header(Optional<Secret> token) {
    return token.map(t -> SCHEME + t.reveal());
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    if (token.isPresent() && !matches(exchange.getRequestHeaders().getFirst("Authorization"))) {
      exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"runlane\"");
      AdminServer.sendError(
          exchange,
          401,
          "unauthorized",
          "GET /runs/{id} needs Authorization: Bearer <the token of PROCESSOR_RUNS_TOKEN>");
      return;
    }
    next.handle(exchange);
  }

  private boolean matches(String authorization) {
    byte[] expected = header(token).orElseThrow().getBytes(StandardCharsets.UTF_8);
    byte[] given = (authorization == null ? "" : authorization).getBytes(StandardCharsets.UTF_8);
    return MessageDigest.isEqual(expected, given);
  }
}
