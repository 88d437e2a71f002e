package dev.runlane.common.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one error shape of runlane: {@code {"error":"<code>","message":"<message>"}}, UTF-8. The code
 * is stable (e.g. {@code invalid_signature}); the message is for people and says nothing secret.
 * Details belong in the log, with the request id.
 */
public final class ErrorBody {

  /** The content type of {@link #json(String, String)}. */
  public static final String CONTENT_TYPE = "application/json; charset=utf-8";

  private static final JsonFactory JSON = new JsonFactory();

  private ErrorBody() {}

  /**
   * @param code a stable, machine-readable code
   * @param message a short human-readable message (null is written as an empty string)
   * @return the JSON document as UTF-8 bytes
   */
  public static byte[] json(String code, String message) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("error", code == null ? "" : code);
      g.writeStringField("message", message == null ? "" : message);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // cannot happen with an in-memory stream
    }
    return out.toByteArray();
  }
}
