package dev.runlane.processor.runs;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The JSON of a {@link RunState}: the same bytes in the run store, its changelog, {@code sume.runs}
 * and {@code /runs/{id}}, encoded once per new state.
 */
public final class RunStateJson {
  static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .build();

  private RunStateJson() {}

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
}
