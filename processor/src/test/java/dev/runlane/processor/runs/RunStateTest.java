package dev.runlane.processor.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runlane.processor.dedup.Order;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RunStateTest {
  private static final Instant T = Instant.parse("2026-11-29T10:00:00Z");
  private final RunState last = new RunState("run-1", "req-m", T, "run.started", 3, T, null);

  @Test
  void theFirstEventOfARunIsNewer() {
    assertThat(RunState.order(null, T, "req-a")).isEqualTo(Order.NEWER);
  }

  @Test
  void ordersByCreatedAtFirst() {
    assertThat(RunState.order(last.head(), T.plusMillis(1), "req-a")).isEqualTo(Order.NEWER);
    assertThat(RunState.order(last.head(), T.minusMillis(1), "req-z")).isEqualTo(Order.OLDER);
  }

  @Test
  void breaksTiesByRequestId() {
    assertThat(RunState.order(last.head(), T, "req-n")).isEqualTo(Order.NEWER);
    assertThat(RunState.order(last.head(), T, "req-a")).isEqualTo(Order.OLDER);
    assertThat(RunState.order(last.head(), T, "req-m")).isEqualTo(Order.SAME);
  }

  @Test
  void applyingCountsAndKeepsTheEventsFields() throws Exception {
    var data = new ObjectMapper().readTree("{\"status\":\"ok\"}");
    RunState next =
        RunState.apply(last.head(), "run-1", "req-n", T.plusSeconds(1), "run.done", T, data);
    assertThat(next.appliedCount()).isEqualTo(4);
    assertThat(next.lastRequestId()).isEqualTo("req-n");
    assertThat(next.lastType()).isEqualTo("run.done");
    assertThat(next.data().get("status").asText()).isEqualTo("ok");
  }

  @Test
  void jsonRoundTripsWithSnakeCaseNamesAndIsoTimes() {
    byte[] json = RunStateJson.toJson(last);
    assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8))
        .contains("\"last_request_id\":\"req-m\"")
        .contains("\"last_created_at\":\"2026-11-29T10:00:00Z\"")
        .contains("\"applied_count\":3");
    assertThat(RunStateJson.fromJson(json)).isEqualTo(last);
  }

  @Test
  void theHeadIsReadWithoutTheData() {
    RunState withData =
        new RunState(
            "run-1", "req-m", T, "run.started", 3, T, RunStateJson.MAPPER.createObjectNode());
    assertThat(RunStateJson.readHead(RunStateJson.toJson(withData))).isEqualTo(last.head());
    // Field order does not matter, and what follows the head is not read: a broken tail passes.
    byte[] reordered =
        ("{\"applied_count\":3,\"last_created_at\":\"2026-11-29T10:00:00Z\","
                + "\"x\":{\"y\":[1,\"z\"]},\"last_request_id\":\"req-m\",\"data\":{broken")
            .getBytes(StandardCharsets.UTF_8);
    assertThat(RunStateJson.readHead(reordered)).isEqualTo(last.head());
  }

  @Test
  void aStateWithoutItsHeadIsAnError() {
    byte[] headless = "{\"run_id\":\"run-1\",\"data\":null}".getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> RunStateJson.readHead(headless))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("head");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"request_id\":\"r\",\"data\":{\"status\":\"ok\",\"n\":[1,2.5,true,null]},\"z\":1}",
        "{\"data\":\"a \\\"quoted\\\" string\",\"request_id\":\"r\"}",
        "{\"data\":-12.5}",
        "{\"data\":[]}",
        "{\"data\":true,\"x\":{}}",
        "{\"data\":null}",
        "{\"request_id\":\"r\"}"
      })
  void theDataIsCopiedAsTheTreeWouldHaveWrittenIt(String body) throws Exception {
    var tree = RunStateJson.MAPPER.readTree(body).get("data");
    RunState viaTree = RunState.apply(last.head(), "run-1", "req-n", T, "run.done", T, tree);
    RunState head = RunState.apply(last.head(), "run-1", "req-n", T, "run.done", T, null);

    byte[] copied = RunStateJson.withDataOf(head, body.getBytes(StandardCharsets.UTF_8));

    assertThat(new String(copied, StandardCharsets.UTF_8))
        .isEqualTo(new String(RunStateJson.toJson(viaTree), StandardCharsets.UTF_8));
    assertThat(RunStateJson.fromJson(copied)).isEqualTo(viaTree);
  }

  @Test
  void theDataKeepsTheSendersFormattingAndReadsBackAsTheSameTree() throws Exception {
    String body = "{ \"data\" : { \"a\" : [ 1 , 2e1 ],\n \"b\": \"\\u00e9\" } }";
    RunState head = RunState.apply(last.head(), "run-1", "req-n", T, "run.done", T, null);

    byte[] copied = RunStateJson.withDataOf(head, body.getBytes(StandardCharsets.UTF_8));

    assertThat(new String(copied, StandardCharsets.UTF_8))
        .endsWith(",\"data\":{ \"a\" : [ 1 , 2e1 ],\n \"b\": \"\\u00e9\" }}");
    assertThat(RunStateJson.fromJson(copied).data())
        .isEqualTo(RunStateJson.MAPPER.readTree(body).get("data"));
  }

  @Test
  void aBrokenBodyIsAnErrorNotAStateWithPartOfIt() {
    RunState head = RunState.apply(last.head(), "run-1", "req-n", T, "run.done", T, null);
    for (String body : new String[] {"{\"data\":{\"a\":1}", "{\"data\":1} {}", "[1]"}) {
      assertThatThrownBy(() -> RunStateJson.withDataOf(head, body.getBytes(StandardCharsets.UTF_8)))
          .as(body)
          .isInstanceOfAny(IllegalStateException.class, java.io.UncheckedIOException.class);
    }
  }
}
