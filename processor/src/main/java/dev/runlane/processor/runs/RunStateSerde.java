package dev.runlane.processor.runs;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/** JSON serde for {@link RunState}: the same bytes in the run store, {@code sume.runs} and HTTP. */
public final class RunStateSerde implements Serde<RunState> {
  static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .build();

  public static byte[] toJson(RunState state) {
    try {
      return MAPPER.writeValueAsBytes(state);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static RunState fromJson(byte[] bytes) {
    try {
      return MAPPER.readValue(bytes, RunState.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public Serializer<RunState> serializer() {
    return (topic, state) -> state == null ? null : toJson(state);
  }

  @Override
  public Deserializer<RunState> deserializer() {
    return (topic, bytes) -> bytes == null ? null : fromJson(bytes);
  }
}
