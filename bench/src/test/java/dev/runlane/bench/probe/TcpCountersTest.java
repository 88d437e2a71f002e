package dev.runlane.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TcpCountersTest {
  private static final String NETSTAT =
      "TcpExt: SyncookiesSent RcvPruned TCPRcvQDrop\n"
          + "TcpExt: 0 110 110\n"
          + "IpExt: InNoRoutes InOctets\n"
          + "IpExt: 0 987654321\n";
  private static final String SNMP =
      "Tcp: RtoAlgorithm RtoMin InSegs RetransSegs\n" + "Tcp: 1 200 265851738 86921\n";

  @Test
  void namesEachValueByItsPrefixAndColumn() {
    Map<String, Long> counters = TcpCounters.parse(NETSTAT);
    assertThat(counters)
        .containsEntry("TcpExt.TCPRcvQDrop", 110L)
        .containsEntry("TcpExt.RcvPruned", 110L)
        .containsEntry("IpExt.InOctets", 987654321L)
        .hasSize(5);
    assertThat(TcpCounters.parse(SNMP)).containsEntry("Tcp.RetransSegs", 86921L);
  }

  @Test
  void aWindowShowsItsDropsAndRetransmits() {
    Map<String, Long> before = Map.of("TcpExt.TCPRcvQDrop", 100L, "Tcp.RetransSegs", 1000L);
    Map<String, Long> after = Map.of("TcpExt.TCPRcvQDrop", 103L, "Tcp.RetransSegs", 1042L);
    assertThat(TcpCounters.between(before, after))
        .isEqualTo("receive-queue drops 3, retransmits 42");
    assertThat(TcpCounters.between(Map.of(), after)).isEqualTo("n/a");
  }

  @Test
  void refusesTextThatIsNotNameAndValueLines() {
    assertThatThrownBy(() -> TcpCounters.parse("TcpExt: A B\nTcpExt: 1\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("TcpExt: A B");
  }
}
