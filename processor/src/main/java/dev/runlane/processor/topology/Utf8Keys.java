package dev.runlane.processor.topology;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Record keys as UTF-8 text, or null when they are not UTF-8. Kafka's string deserializer replaces
 * bad bytes with U+FFFD, so a key whose bytes pick one partition could still equal a run id whose
 * UTF-8 picks another, and one run would be split across two partitions and their order guards. A
 * null key never equals a run id: the record is dead-lettered as {@code key_mismatch}.
 */
final class Utf8Keys implements Deserializer<String> {
  @Override
  public String deserialize(String topic, byte[] data) {
    if (data == null) {
      return null;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(data))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
