package dev.runlane.common.signature;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeaderLookupTest {

  @Test
  void looksUpCaseInsensitively() {
    HeaderLookup h = HeaderLookup.of(Map.of("X-Sume-Timestamp", "1"));

    assertThat(h.get("x-sume-timestamp")).isEqualTo("1");
    assertThat(h.get("X-SUME-TIMESTAMP")).isEqualTo("1");
    assertThat(h.get("X-Sume-Signature")).isNull();
  }

  @Test
  void ignoresNullKeysAndIsACopy() {
    Map<String, String> m = new HashMap<>();
    m.put(null, "HTTP/1.1 200 OK");
    m.put("a", "1");
    HeaderLookup h = HeaderLookup.of(m);
    m.put("a", "2");

    assertThat(h.get("A")).isEqualTo("1");
  }
}
