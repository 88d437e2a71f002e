package dev.runlane.ingress.http;

import dev.runlane.common.http.ErrorBody;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * The one writer of answers to webhook requests, the 200s and the errors alike: every error body is
 * {@link ErrorBody#json(String, String)}, and {@link #ok(HttpServerRequest, JsonObject)} writes the
 * 200s. When the request body was not read to the end (413, 415, 404, 405), the connection is
 * closed after the response, so that the rest is never read.
 */
public final class ResponseWriter {

  private final String retryAfterSeconds;

  /**
   * @param retryAfter the {@code Retry-After} of a 503
   */
  public ResponseWriter(Duration retryAfter) {
    this.retryAfterSeconds = Long.toString(Math.max(1, retryAfter.toSeconds()));
  }

  /** 200 with {@code body}: the broker acknowledged the record. */
  public void ok(HttpServerRequest request, JsonObject body) {
    HttpServerResponse response = request.response();
    if (response.ended() || response.closed()) {
      return;
    }
    response
        .setStatusCode(200)
        .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-store")
        .end(body.toBuffer());
  }

  /** Writes {@code status} with {@code {"error":code,"message":message}}. */
  public void error(HttpServerRequest request, int status, String code, String message) {
    HttpServerResponse response = request.response();
    if (response.ended() || response.closed()) {
      return;
    }
    boolean unread = !request.isEnded();
    response
        .setStatusCode(status)
        .putHeader(HttpHeaders.CONTENT_TYPE, ErrorBody.CONTENT_TYPE)
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-store");
    if (unread) {
      response.putHeader(HttpHeaders.CONNECTION, HttpHeaders.CLOSE);
    }
    response
        .end(Buffer.buffer(ErrorBody.json(code, message)))
        .onComplete(
            ar -> {
              if (unread) {
                request.connection().close();
              }
            });
  }

  /** 503 with {@code Retry-After}: the broker did not acknowledge in time, or is unreachable. */
  public void unavailable(HttpServerRequest request, String message) {
    HttpServerResponse response = request.response();
    if (!response.ended() && !response.closed()) {
      response.putHeader(HttpHeaders.RETRY_AFTER, retryAfterSeconds);
    }
    error(request, 503, "unavailable", message);
  }

  public void notFound(HttpServerRequest request) {
    error(request, 404, "not_found", "no such path");
  }

  public void methodNotAllowed(HttpServerRequest request, String allow) {
    HttpServerResponse response = request.response();
    if (!response.ended() && !response.closed()) {
      response.putHeader(HttpHeaders.ALLOW, allow);
    }
    error(request, 405, "method_not_allowed", "use " + allow);
  }
}
