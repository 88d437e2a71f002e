package dev.runlane.common.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ErrorBodyTest {

  @Test
  void writesTheErrorShape() {
    assertThat(new String(ErrorBody.json("invalid_signature", "bad"), StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":\"invalid_signature\",\"message\":\"bad\"}");
  }

  @Test
  void escapesQuotesNewlinesAndControlCharacters() throws Exception {
    String message = "say \"hi\"\nback\\slash\ttab\u0001 é";

    byte[] body = ErrorBody.json("c\"ode", message);

    String text = new String(body, StandardCharsets.UTF_8);
    assertThat(text).doesNotContain("\n").contains("\\\"hi\\\"").contains("\\n");
    JsonNode node = new ObjectMapper().readTree(body);
    assertThat(node.get("error").asText()).isEqualTo("c\"ode");
    assertThat(node.get("message").asText()).isEqualTo(message);
  }

  @Test
  void nullMessageIsEmpty() {
    assertThat(new String(ErrorBody.json("x", null), StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":\"x\",\"message\":\"\"}");
  }
}
