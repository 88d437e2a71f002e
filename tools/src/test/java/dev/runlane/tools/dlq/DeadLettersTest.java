package dev.runlane.tools.dlq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runlane.tools.BadUsage;
import org.junit.jupiter.api.Test;

class DeadLettersTest {

  @Test
  void readsCoordinatesOfTopicsWhoseNamesHoldDots() {
    DeadLetters.Coordinates c = DeadLetters.Coordinates.parse("sume.webhooks.dlq/3/1207");

    assertThat(c.topic()).isEqualTo("sume.webhooks.dlq");
    assertThat(c.partition()).isEqualTo(3);
    assertThat(c.offset()).isEqualTo(1207);
    assertThat(c).hasToString("sume.webhooks.dlq/3/1207");
  }

  @Test
  void somethingElseIsABadUsageSayingWhatIsExpected() {
    for (String bad : new String[] {"sume.webhooks.dlq", "x/1", "/1/2", "t/p/o", "t/1/"}) {
      assertThatThrownBy(() -> DeadLetters.Coordinates.parse(bad))
          .as(bad)
          .isInstanceOf(BadUsage.class)
          .hasMessageContaining("<topic>/<partition>/<offset>");
    }
  }
}
