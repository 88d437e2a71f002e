package dev.runlane.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WebhookHandlerTest {

  @Test
  void clientHeaderValuesAreCutForTheLog() {
    String longValue = "evt_" + "x".repeat(10_000);

    assertThat(WebhookHandler.truncate(longValue))
        .startsWith("evt_x")
        .hasSize(WebhookHandler.MAX_LOGGED_HEADER_CHARS + "...".length());
  }

  @Test
  void shortHeaderValuesAndAbsentOnesAreLoggedAsGiven() {
    String exact = "e".repeat(WebhookHandler.MAX_LOGGED_HEADER_CHARS);

    assertThat(WebhookHandler.truncate("evt_123")).isEqualTo("evt_123");
    assertThat(WebhookHandler.truncate(exact)).isEqualTo(exact);
    assertThat(WebhookHandler.truncate(null)).isNull();
  }
}
