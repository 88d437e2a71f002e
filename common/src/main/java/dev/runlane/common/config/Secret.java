package dev.runlane.common.config;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * A secret string (signing key, password). {@link #toString()} is {@code ***} so that a secret held
 * by a config record never reaches a log line; call {@link #reveal()} or {@link #utf8()} only where
 * the value is used.
 */
public final class Secret {

  private final String value;

  private Secret(String value) {
    this.value = value;
  }

  /**
   * Wraps a secret value.
   *
   * @throws IllegalArgumentException if the value is null or blank (the message never contains the
   *     value)
   */
  public static Secret of(String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("a secret must not be null or blank");
    }
    return new Secret(value);
  }

  /** The secret value. Never log it. */
  public String reveal() {
    return value;
  }

  /** The secret value as UTF-8 bytes (a fresh copy on every call). */
  public byte[] utf8() {
    return value.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Secret other
        && MessageDigest.isEqual(
            value.getBytes(StandardCharsets.UTF_8), other.value.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(value);
  }

  /** Always {@code ***}. */
  @Override
  public String toString() {
    return "***";
  }
}
