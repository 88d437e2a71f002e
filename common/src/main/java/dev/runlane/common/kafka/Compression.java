package dev.runlane.common.kafka;

import java.util.Locale;

/** A producer's {@code compression.type}, as a setting the environment can name. */
public enum Compression {
  NONE,
  GZIP,
  SNAPPY,
  LZ4,
  ZSTD;

  /** The value Kafka's {@code compression.type} takes. */
  public String kafkaName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
