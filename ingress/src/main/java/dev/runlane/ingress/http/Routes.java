package dev.runlane.ingress.http;

import io.vertx.core.Handler;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The route table: exact paths, one {@code POST} handler each. Other paths get 404, other methods
 * on a known path 405 with {@code Allow: POST}. Never a redirect (a trailing slash is another
 * path).
 */
public final class Routes implements Handler<HttpServerRequest> {

  private final Map<String, Handler<HttpServerRequest>> post = new LinkedHashMap<>();
  private final ResponseWriter responses;

  public Routes(ResponseWriter responses) {
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  /** Adds {@code POST path}. */
  public Routes post(String path, Handler<HttpServerRequest> handler) {
    if (post.putIfAbsent(path, Objects.requireNonNull(handler, "handler")) != null) {
      throw new IllegalArgumentException("route " + path + " is defined twice");
    }
    return this;
  }

  /** The paths served, in order. */
  public Iterable<String> paths() {
    return post.keySet();
  }

  @Override
  public void handle(HttpServerRequest request) {
    Handler<HttpServerRequest> handler = post.get(request.path());
    if (handler == null) {
      responses.notFound(request);
    } else if (request.method() != HttpMethod.POST) {
      responses.methodNotAllowed(request, "POST");
    } else {
      handler.handle(request);
    }
  }
}
