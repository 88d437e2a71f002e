package dev.runlane.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The sizing model's arithmetic at the worked table's rates (operations.md "Sizing", D84). */
class SizingModelTest {

  private static SizingModel at(double rate) {
    return new SizingModel(rate, Duration.ofHours(24), Duration.ofDays(7), 1100, 25);
  }

  @Test
  void oneNodeHoldsAThousandWebhooksASecondForADay() {
    SizingModel m = at(1_000);
    assertThat(m.markers()).isEqualTo(86_400_000);
    assertThat(m.oneNode()).isTrue();
    assertThat(m.redisGb()).isCloseTo(14.3, within(0.1));
    assertThat(m.redisPrimaries()).isEqualTo(1);
    assertThat(m.processors()).isEqualTo(2);
  }

  @Test
  void aHundredThousandASecondNeedsAClusterSizedByMemory() {
    SizingModel m = at(100_000);
    assertThat(m.oneNode()).isFalse();
    assertThat(m.redisGb()).isCloseTo(2_307, within(1.0));
    assertThat(m.redisPrimaries()).isEqualTo(93);
    assertThat(m.processors()).isEqualTo(9);
    assertThat(m.partitions()).isEqualTo(36);
    assertThat(m.firstBottleneck()).startsWith("broker disk");
  }

  @Test
  void aShorterHorizonShrinksRedisInProportion() {
    SizingModel day = at(100_000);
    SizingModel tenHours =
        new SizingModel(100_000, Duration.ofHours(10), Duration.ofDays(7), 1100, 25);
    assertThat(tenHours.redisGb() / day.redisGb()).isCloseTo(10 / 24.0, within(1e-9));
  }

  @Test
  void theWorkedTablePrints() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    for (double rate : new double[] {100, 1_000, 10_000, 100_000}) {
      SizingCommand.print(out, at(rate));
      out.println();
    }
    String table = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(table);
    assertThat(table).contains("Redis primaries         93 (Redis Cluster)");
  }
}
