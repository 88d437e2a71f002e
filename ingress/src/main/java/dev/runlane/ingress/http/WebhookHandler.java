package dev.runlane.ingress.http;

import dev.runlane.common.envelope.Envelope;
import dev.runlane.common.envelope.EnvelopeException;
import dev.runlane.common.envelope.EnvelopeParser;
import dev.runlane.common.signature.SignatureException;
import dev.runlane.ingress.http.IngressMeters.Outcome;
import dev.runlane.ingress.publish.Inbound;
import dev.runlane.ingress.publish.WebhookPublisher;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * {@code POST /webhooks/<source>}: reads the body up to the limit, verifies the signature over the
 * raw bytes, parses the envelope and writes the record; answers only once the broker acknowledged
 * it, or 503 at the deadline.
 *
 * <p>Runs on an event loop: nothing here blocks. All state of one request stays on the request's
 * event-loop context (the ack callback hops back to it).
 */
public final class WebhookHandler implements Handler<HttpServerRequest> {

  private static final Logger log = LoggerFactory.getLogger(WebhookHandler.class);

  /** The most of a client-supplied header value that goes into a log line. */
  static final int MAX_LOGGED_HEADER_CHARS = 64;

  /**
   * The most buffer allocated up front: the declared length is an unauthenticated header. 4 KiB,
   * not 64: the buffer is held for as long as the client takes to send the body, and with 64 KiB a
   * thousand connections that had sent only their headers held 75 MiB of a 128 MiB heap
   * (BadInputAtVolumeIT). Larger bodies grow the buffer as their bytes arrive.
   */
  static final int MAX_INITIAL_BODY_CAPACITY = 4 * 1024;

  private static final String NO_ACK = "Kafka did not acknowledge the write in time; retry later";

  private static final String TOO_SLOW = "the request took too long to arrive; retry later";

  private final WebhookSource source;
  private final EnvelopeParser parser;
  private final WebhookPublisher publisher;
  private final ResponseWriter responses;
  private final IngressMeters meters;
  private final Vertx vertx;
  private final int maxBodyBytes;
  private final long ackTimeoutMillis;
  private final Clock clock;

  /** One per event loop: the loops' servers share this handler, and each sweeps its own. */
  private final ThreadLocal<AckDeadlines> deadlines;

  public WebhookHandler(
      WebhookSource source,
      EnvelopeParser parser,
      WebhookPublisher publisher,
      ResponseWriter responses,
      IngressMeters meters,
      Vertx vertx,
      int maxBodyBytes,
      Duration ackTimeout,
      Clock clock) {
    this.source = source;
    this.parser = parser;
    this.publisher = publisher;
    this.responses = responses;
    this.meters = meters;
    this.vertx = vertx;
    this.maxBodyBytes = maxBodyBytes;
    this.ackTimeoutMillis = ackTimeout.toMillis();
    this.clock = clock;
    this.deadlines = ThreadLocal.withInitial(() -> new AckDeadlines(vertx, System::nanoTime));
    meters.register(source.name());
  }

  @Override
  public void handle(HttpServerRequest request) {
    Instant receivedAt = clock.instant();
    long receivedNanos = System.nanoTime(); // the ack deadline counts from here
    long declared = contentLength(request);
    if (declared > maxBodyBytes) {
      tooLarge(request, "Content-Length " + declared);
      return;
    }
    if (!JsonContentType.isJson(request.getHeader(HttpHeaders.CONTENT_TYPE))) {
      meters.count(source.name(), Outcome.UNSUPPORTED_MEDIA_TYPE);
      log.debug(
          "rejected {} webhook: content type {} is not JSON",
          source.name(),
          truncate(request.getHeader(HttpHeaders.CONTENT_TYPE)));
      responses.error(request, 415, "unsupported_media_type", "the body must be application/json");
      return;
    }
    Buffer body =
        Buffer.buffer(declared > 0 ? (int) Math.min(declared, MAX_INITIAL_BODY_CAPACITY) : 4096);
    boolean[] stopped = {false}; // confined to the request's event loop
    AckDeadlines loopDeadlines = deadlines.get();
    // A body still arriving at the ack deadline gets now the 503 it would get once complete:
    // otherwise a client that sends a byte now and then (slowloris) keeps its connection and its
    // buffer for as long as it likes, since the idle timeout never fires (BadInputAtVolumeIT).
    AckDeadlines.Waiting bodyDeadline =
        loopDeadlines.add(
            receivedNanos + TimeUnit.MILLISECONDS.toNanos(ackTimeoutMillis),
            () -> {
              if (!stopped[0]) {
                stopped[0] = true;
                request.pause();
                unavailable(
                    request,
                    null,
                    null,
                    "the body did not arrive within the ack deadline",
                    null,
                    TOO_SLOW);
              }
            });
    request.handler(
        chunk -> {
          if (stopped[0]) {
            return;
          }
          if (body.length() + chunk.length() > maxBodyBytes) {
            stopped[0] = true;
            loopDeadlines.settle(bodyDeadline);
            request.pause();
            tooLarge(request, "streamed body");
            return;
          }
          body.appendBuffer(chunk);
        });
    request.exceptionHandler(
        e -> {
          if (!stopped[0]) {
            stopped[0] = true;
            loopDeadlines.settle(bodyDeadline);
            meters.count(source.name(), Outcome.ABORTED);
            log.debug("{} webhook request aborted while reading the body", source.name(), e);
          }
        });
    request.endHandler(
        v -> {
          if (!stopped[0]) {
            stopped[0] = true;
            loopDeadlines.settle(bodyDeadline);
            onBody(request, body.getBytes(), receivedAt, receivedNanos);
          }
        });
    if ("100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT))) {
      request.response().writeContinue();
    }
  }

  /**
   * Answers a complete body. Whatever goes wrong here unexpectedly (verifier, parser, publisher)
   * still answers the request: 503, so that the sender retries.
   */
  private void onBody(
      HttpServerRequest request, byte[] raw, Instant receivedAt, long receivedNanos) {
    try {
      verifyParseAndPublish(request, raw, receivedAt, receivedNanos);
    } catch (RuntimeException e) {
      internalError(request, e);
    }
  }

  private void verifyParseAndPublish(
      HttpServerRequest request, byte[] raw, Instant receivedAt, long receivedNanos) {
    try {
      source.verifier().verify(raw, request.headers()::get);
    } catch (SignatureException e) {
      meters.rejected(source.name(), e);
      log.warn(
          "rejected {} webhook event_id={}: {} ({})",
          source.name(),
          truncate(request.getHeader(source.verifier().headerNames().get(0))),
          e.code(),
          e.getMessage());
      responses.error(request, 401, e.code(), "the signature or its timestamp is not valid");
      return;
    }
    long remainingMillis = remainingMillis(receivedNanos);
    if (remainingMillis <= 0) {
      unavailable(
          request, null, null, "the ack deadline passed while the body was read", null, TOO_SLOW);
      return;
    }
    Inbound inbound = new Inbound(source.name(), receivedAt, signatureHeaders(request));
    Envelope envelope;
    try {
      envelope = parser.parse(raw);
    } catch (EnvelopeException e) {
      deadLetter(request, raw, e, inbound, remainingMillis);
      return;
    }
    awaitAck(
        request,
        publisher.publish(envelope, inbound),
        remainingMillis,
        "webhooks",
        envelope.requestId(),
        envelope.runId(),
        metadata -> {
          meters.count(source.name(), Outcome.ACCEPTED);
          withIds(
              envelope.requestId(),
              envelope.runId(),
              () ->
                  log.debug(
                      "accepted {} webhook at {}-{}@{}",
                      source.name(),
                      metadata.topic(),
                      metadata.partition(),
                      metadata.offset()));
          responses.ok(
              request,
              new JsonObject().put("status", "accepted").put("request_id", envelope.requestId()));
        });
  }

  /** What is left of the ack deadline, counted from when the request was received. */
  private long remainingMillis(long receivedNanos) {
    return ackTimeoutMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - receivedNanos);
  }

  private void deadLetter(
      HttpServerRequest request,
      byte[] raw,
      EnvelopeException e,
      Inbound inbound,
      long remainingMillis) {
    awaitAck(
        request,
        publisher.deadLetter(raw, e.code(), e.getMessage(), inbound),
        remainingMillis,
        "dlq",
        null,
        null,
        metadata -> {
          meters.count(source.name(), Outcome.DEAD_LETTERED);
          log.warn(
              "dead-lettered signed {} webhook ({} bytes) at {}-{}@{}: {} ({})",
              source.name(),
              raw.length,
              metadata.topic(),
              metadata.partition(),
              metadata.offset(),
              e.code(),
              e.getMessage());
          responses.ok(
              request, new JsonObject().put("status", "dead_lettered").put("reason", e.code()));
        });
  }

  /**
   * Answers with {@code onAck} once the broker acknowledged, or 503 when the write failed or did
   * not complete within {@code remainingMillis} (what is left of the deadline), whichever comes
   * first.
   */
  private void awaitAck(
      HttpServerRequest request,
      CompletionStage<RecordMetadata> ack,
      long remainingMillis,
      String topicKind,
      String requestId,
      String runId,
      Consumer<RecordMetadata> onAck) {
    Context context = vertx.getOrCreateContext();
    long sent = System.nanoTime();
    boolean[] answered = {false}; // confined to the request's event loop
    AckDeadlines loopDeadlines = deadlines.get();
    AckDeadlines.Waiting waiting =
        loopDeadlines.add(
            sent + TimeUnit.MILLISECONDS.toNanos(remainingMillis),
            () -> {
              if (!answered[0]) {
                answered[0] = true;
                unavailable(
                    request, requestId, runId, "no broker ack within the deadline", null, NO_ACK);
              }
            });
    ack.whenComplete(
        (metadata, error) ->
            context.runOnContext(
                v -> {
                  loopDeadlines.settle(waiting);
                  if (answered[0]) {
                    if (error == null) {
                      withIds(
                          requestId,
                          runId,
                          () ->
                              log.info(
                                  "broker ack arrived after the 503 answer (a retry follows)"));
                    }
                    return;
                  }
                  answered[0] = true;
                  if (error != null) {
                    unavailable(request, requestId, runId, "the write failed", error, NO_ACK);
                    return;
                  }
                  meters.ackLatency(
                      source.name(), topicKind, Duration.ofNanos(System.nanoTime() - sent));
                  try {
                    onAck.accept(metadata);
                  } catch (RuntimeException e) {
                    internalError(request, e);
                  }
                }));
  }

  private void unavailable(
      HttpServerRequest request,
      String requestId,
      String runId,
      String why,
      Throwable error,
      String clientMessage) {
    meters.count(source.name(), Outcome.UNAVAILABLE);
    withIds(
        requestId,
        runId,
        () ->
            log.warn(
                "answered 503 to {} webhook: {}{}",
                source.name(),
                why,
                error == null ? "" : ": " + error));
    responses.unavailable(request, clientMessage);
  }

  private void internalError(HttpServerRequest request, RuntimeException e) {
    meters.count(source.name(), Outcome.INTERNAL_ERROR);
    log.error("answered 503 to {} webhook: unexpected failure", source.name(), e);
    responses.unavailable(request, "the webhook could not be processed; retry later");
  }

  private void tooLarge(HttpServerRequest request, String what) {
    meters.count(source.name(), Outcome.TOO_LARGE);
    log.debug(
        "rejected {} webhook: {} over the limit of {} bytes", source.name(), what, maxBodyBytes);
    responses.error(
        request, 413, "too_large", "the body is larger than " + maxBodyBytes + " bytes");
  }

  private Map<String, String> signatureHeaders(HttpServerRequest request) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : source.verifier().headerNames()) {
      String value = request.getHeader(name);
      if (value != null) {
        out.put(name, value);
      }
    }
    return out;
  }

  /** The declared body length, or -1 when absent or not a number (Netty rejects the latter). */
  private static long contentLength(HttpServerRequest request) {
    String value = request.getHeader(HttpHeaders.CONTENT_LENGTH);
    if (value == null) {
      return -1;
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * {@code value} cut to {@link #MAX_LOGGED_HEADER_CHARS}, for a client-supplied header in a log.
   */
  static String truncate(String value) {
    if (value == null || value.length() <= MAX_LOGGED_HEADER_CHARS) {
      return value;
    }
    return value.substring(0, MAX_LOGGED_HEADER_CHARS) + "...";
  }

  private static void withIds(String requestId, String runId, Runnable logStatement) {
    if (requestId == null) {
      logStatement.run();
      return;
    }
    MDC.put("request_id", requestId);
    MDC.put("run_id", runId);
    try {
      logStatement.run();
    } finally {
      MDC.remove("request_id");
      MDC.remove("run_id");
    }
  }
}
