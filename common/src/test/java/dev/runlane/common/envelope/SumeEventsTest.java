package dev.runlane.common.envelope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SumeEventsTest {
  private static final Instant T0 = Instant.parse("2026-11-29T10:00:00.123Z");

  @Test
  void writesTheEnvelopeFieldsInTheirFixedOrder() {
    String json =
        SumeEvents.event("run-1", "req-1", T0)
            .type("run.started")
            .data("seq", 0)
            .data("status", "started")
            .json();

    assertThat(json)
        .isEqualTo(
            "{\"request_id\":\"req-1\",\"created_at\":\"2026-11-29T10:00:00.123Z\","
                + "\"type\":\"run.started\",\"data\":{\"run_id\":\"run-1\",\"seq\":0,"
                + "\"status\":\"started\"}}");
  }

  @Test
  void isReadBackByTheParserWithTheSameFields() throws EnvelopeException {
    byte[] body = SumeEvents.event("run-\"q\"", "réq-✓", T0).type("run.updated").bytes();

    Envelope e = EnvelopeParser.withDefaults().parse(body);

    assertThat(e.runId()).isEqualTo("run-\"q\"");
    assertThat(e.requestId()).isEqualTo("réq-✓");
    assertThat(e.createdAt()).isEqualTo(T0);
    assertThat(e.type()).isEqualTo("run.updated");
  }

  @Test
  void leavesTypeOutUnlessSet() {
    assertThat(SumeEvents.event("u", "r", T0).json()).doesNotContain("\"type\"");
  }

  @Test
  void writesCreatedAtAsGivenWhenAString() {
    assertThat(SumeEvents.event("u", "r", "2026-13-45").json())
        .contains("\"created_at\":\"2026-13-45\"");
  }

  @Test
  void padsToExactlyTheSizeAsked() {
    byte[] body = SumeEvents.event("run-1", "req-1", T0).paddedTo(1024, "note").bytes();

    assertThat(body).hasSize(1024);
    assertThat(new String(body, StandardCharsets.UTF_8)).contains("\"note\":\"xxx");
  }

  @Test
  void leavesABodyLongerThanThePadSizeAsItIs() {
    byte[] body = SumeEvents.event("run-1", "req-1", T0).paddedTo(10, "note").bytes();

    assertThat(new String(body, StandardCharsets.UTF_8)).endsWith("\"note\":\"\"}}");
  }

  @Test
  void givesTheSameBytesEachTime() {
    SumeEvents.Event event =
        SumeEvents.event("run-1", "req-1", T0)
            .paddedTo(300, "pad", n -> "ab".repeat(n).substring(0, n));

    assertThat(event.bytes()).isEqualTo(event.bytes()).hasSize(300);
  }

  @Test
  void padsWithFewerBytesWhenTheFillerGivesFewerCharacters() {
    byte[] body =
        SumeEvents.event("run-1", "req-1", T0).paddedTo(300, "pad", n -> "y".repeat(n - 2)).bytes();

    assertThat(body).hasSize(298);
  }

  @Test
  void refusesAFillerThatWritesMoreBytesThanCharacters() {
    SumeEvents.Event event = SumeEvents.event("u", "r", T0).paddedTo(200, "pad", "é"::repeat);

    assertThatThrownBy(event::bytes).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void refusesRunIdAsADataField() {
    assertThatThrownBy(() -> SumeEvents.event("u", "r", T0).data("run_id", "other"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
