package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class UniqueNameTest {

  @Test
  void addsADashAndAShortLowercaseSuffix() {
    assertThat(SharedInfra.uniqueName("sume.webhooks", new SplittableRandom(1)))
        .matches("sume\\.webhooks-[a-z0-9]{8}");
  }

  @Test
  void keepsASeparatorTheCallerAlreadyWrote() {
    assertThat(SharedInfra.uniqueName("runlane:dedup:", new SplittableRandom(1)))
        .matches("runlane:dedup:[a-z0-9]{8}");
  }

  @Test
  void differsBetweenCalls() {
    SplittableRandom random = new SplittableRandom(7);
    assertThat(SharedInfra.uniqueName("t", random))
        .isNotEqualTo(SharedInfra.uniqueName("t", random));
  }
}
