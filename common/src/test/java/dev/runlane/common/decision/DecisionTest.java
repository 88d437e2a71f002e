package dev.runlane.common.decision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The decision log's record, written field by field (D100), is byte for byte what databind wrote
 * before it: the trace, the audit, the ledger and records already in the topic read both.
 */
class DecisionTest {
  /** The encoder before D100: databind over the record's annotations. */
  private static final ObjectMapper DATABIND = JsonMapper.builder().build();

  private static final String[] TEXTS = {
    null,
    "",
    "req-1",
    "quote \" backslash \\ slash /",
    "controls \n\r\t\b\f \u0000 \u001f \u007f",
    "unicode é 日本 \u2028 \u2029 😀",
    "lone surrogate-free <>&'",
  };

  /** Texts the hand-written path writes: printable ASCII with nothing to escape. */
  private static final String[] PLAIN = {
    null, "", "r", "0b8f2c1e-5d3a-4f7e-9a61-2c4d8e9f0a1b", "sume.webhooks", "a/b <>&' ~!@#$%^*()"
  };

  @Test
  void bytesAreDatabindsOverVariedDecisions() throws JsonProcessingException {
    List<Decision> plain = variedDecisions(PLAIN);
    List<Decision> escaped = variedDecisions(TEXTS);
    for (Decision d : plain) {
      assertThat(DecisionBytes.plain(d)).as("written by hand: %s", d).isNotNull();
      assertSameAsDatabind(d);
    }
    for (Decision d : escaped) {
      assertSameAsDatabind(d);
    }
    assertThat(escaped).filteredOn(d -> DecisionBytes.plain(d) == null).hasSizeGreaterThan(40);
  }

  private static void assertSameAsDatabind(Decision d) throws JsonProcessingException {
    byte[] mine = d.toBytes();
    assertThat(new String(mine, StandardCharsets.UTF_8))
        .isEqualTo(new String(DATABIND.writeValueAsBytes(d), StandardCharsets.UTF_8));
    assertThat(Decision.parse(mine)).isEqualTo(d);
  }

  @Test
  void aRecordOfTheOldEncoderStillReads() {
    String old =
        "{\"request_id\":\"r\\\"1\",\"run_id\":\"run-7\",\"input_topic\":\"sume.webhooks\","
            + "\"input_partition\":3,\"input_offset\":42,\"generation\":1,\"outcome\":\"applied\","
            + "\"layer\":\"store\",\"output\":\"sume.events\",\"received_at\":1700000000000,"
            + "\"decided_at\":1700000000123,\"later_field\":true}";
    assertThat(Decision.parse(old.getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(
            new Decision(
                "r\"1",
                "run-7",
                "sume.webhooks",
                3,
                42,
                1,
                null,
                Decision.Outcome.APPLIED,
                "store",
                null,
                "sume.events",
                1_700_000_000_000L,
                1_700_000_000_123L));
  }

  /** Every outcome with each text in each text field, nulls and extreme numbers among them. */
  private static List<Decision> variedDecisions(String[] texts) {
    List<Decision> out = new ArrayList<>();
    Decision.Outcome[] outcomes = Decision.Outcome.values();
    Long[] received = {null, 0L, -1L, Long.MAX_VALUE, 1_700_000_000_000L, Long.MIN_VALUE};
    for (int i = 0; i < texts.length * outcomes.length * 2; i++) {
      String t = texts[i % texts.length];
      String u = texts[(i + 3) % texts.length];
      out.add(
          new Decision(
              t,
              u,
              i % 2 == 0 ? "sume.webhooks" : t,
              i % 2 == 0 ? i : Integer.MIN_VALUE,
              i % 3 == 0 ? Long.MIN_VALUE : i * 1_000_003L,
              i % 5 == 0 ? Integer.MAX_VALUE : i % 4,
              u,
              i == 1 ? null : outcomes[i % outcomes.length],
              t,
              u,
              t,
              received[i % received.length],
              i % 2 == 0 ? Long.MAX_VALUE : -i));
    }
    return out;
  }
}
