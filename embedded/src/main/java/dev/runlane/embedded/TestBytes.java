package dev.runlane.embedded;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Request bodies that no string can spell: bytes that are not UTF-8, put inside a text. */
public final class TestBytes {
  private TestBytes() {}

  /**
   * {@code text} as UTF-8, with {@code bytes} in place of the first {@code marker}.
   *
   * @throws IllegalArgumentException if {@code text} has no {@code marker}
   */
  public static byte[] spliced(String text, String marker, byte[] bytes) {
    int at = text.indexOf(marker);
    if (at < 0) {
      throw new IllegalArgumentException("no " + marker + " in " + text);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(text.substring(0, at).getBytes(StandardCharsets.UTF_8));
    out.writeBytes(bytes);
    out.writeBytes(text.substring(at + marker.length()).getBytes(StandardCharsets.UTF_8));
    return out.toByteArray();
  }
}
