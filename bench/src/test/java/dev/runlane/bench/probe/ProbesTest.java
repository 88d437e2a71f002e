package dev.runlane.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProbesTest {

  @Test
  void noneUnlessARunNamesThem() {
    assertThat(Probes.parse(null).on()).isEmpty();
    assertThat(Probes.parse(" ").tcp()).isFalse();
  }

  @Test
  void namesAreACommaSeparatedListInAnyCase() {
    Probes p = Probes.parse("TCP, broker-requests");
    assertThat(p.tcp()).isTrue();
    assertThat(p.brokerRequests()).isTrue();
    assertThat(Probes.parse("tcp").brokerRequests()).isFalse();
  }

  @Test
  void anUnknownNameIsRefusedWithTheKnownOnes() {
    assertThatThrownBy(() -> Probes.parse("tcp,jfr"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("BENCH_PROBES: unknown probe 'jfr'; probes: [tcp, broker-requests]");
  }
}
