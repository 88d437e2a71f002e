package dev.runlane.common.generation;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The inputs grows retired, each with the offsets up to which a grow (or {@code partitions
 * catch-up}) copied it into a later input (D71). Kept in the control topic under {@code
 * <pipeline>/retired}, beside the generation record and written by the same fenced writer, so it
 * survives every later generation: a record past the mark was written after the input was retired
 * and nobody reads it until {@code partitions catch-up} copies it.
 *
 * @param inputs oldest first
 */
public record RetiredInputs(@JsonProperty("inputs") List<Retired> inputs) {

  /**
   * @param input the retired topic
   * @param generation the generation whose grow retired it
   * @param copiedTo per partition, the offset up to which it was copied
   */
  public record Retired(
      @JsonProperty("input") String input,
      @JsonProperty("generation") int generation,
      @JsonProperty("copied_to") Map<Integer, Long> copiedTo) {
    public Retired {
      Objects.requireNonNull(input, "input");
      copiedTo = Map.copyOf(copiedTo);
    }

    /**
     * The records past the mark, given each partition's end offset. Only marked partitions count:
     * nothing else of the input is known to have been read.
     */
    public long late(Map<Integer, Long> end) {
      long late = 0;
      for (Map.Entry<Integer, Long> e : copiedTo.entrySet()) {
        late += Math.max(0, end.getOrDefault(e.getKey(), e.getValue()) - e.getValue());
      }
      return late;
    }
  }

  public RetiredInputs {
    inputs = List.copyOf(inputs == null ? List.of() : inputs);
  }

  public static final RetiredInputs NONE = new RetiredInputs(List.of());

  /** The control topic key: the pipeline's, with {@code /retired}. */
  public static String key(String pipeline) {
    return pipeline + "/retired";
  }

  /** These inputs without {@code input}: it is written to again (a cancelled grow, D76). */
  public RetiredInputs without(String input) {
    return new RetiredInputs(inputs.stream().filter(r -> !r.input().equals(input)).toList());
  }

  /** These inputs, with {@code retired} added or its mark replaced. */
  public RetiredInputs with(Retired retired) {
    List<Retired> next = new ArrayList<>();
    boolean replaced = false;
    for (Retired r : inputs) {
      if (r.input().equals(retired.input())) {
        next.add(retired);
        replaced = true;
      } else {
        next.add(r);
      }
    }
    if (!replaced) {
      next.add(retired);
    }
    return new RetiredInputs(next);
  }

  public byte[] encode() {
    return ControlTopic.toJson(this);
  }

  /**
   * @throws IllegalArgumentException if {@code json} is not a list of retired inputs
   */
  public static RetiredInputs decode(byte[] json) {
    return ControlTopic.fromJson(json, RetiredInputs.class, "list of retired inputs");
  }
}
