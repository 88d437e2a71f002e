package dev.runlane.ingress.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class JsonContentTypeTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        "  application/json  ",
        "application/cloudevents+json",
        "application/vnd.sume.v1+json; charset=utf-8"
      })
  void acceptsJson(String contentType) {
    assertThat(JsonContentType.isJson(contentType)).isTrue();
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(
      strings = {
        "",
        "text/plain",
        "text/json",
        "application/jsonx",
        "application/x-www-form-urlencoded",
        "application/+json",
        "json",
        "application/json/extra",
        "multipart/form-data; boundary=json"
      })
  void rejectsOthers(String contentType) {
    assertThat(JsonContentType.isJson(contentType)).isFalse();
  }
}
