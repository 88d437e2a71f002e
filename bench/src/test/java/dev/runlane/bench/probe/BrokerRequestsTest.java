package dev.runlane.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerRequestsTest {

  @Test
  void topListsTheRequestTypesWithTheMostHandlerTimeBetweenTwoSamples() {
    Map<String, BrokerRequests.Count> before =
        Map.of(
            "Produce", new BrokerRequests.Count(100, 10),
            "Fetch", new BrokerRequests.Count(50, 1));
    Map<String, BrokerRequests.Count> after =
        Map.of(
            "Produce", new BrokerRequests.Count(300, 30),
            "Fetch", new BrokerRequests.Count(80, 50),
            "EndTxn", new BrokerRequests.Count(5, 1));

    assertThat(BrokerRequests.top(before, after, 2)).isEqualTo(" Fetch=30/49 Produce=200/20");
  }

  @Test
  void readsATagOfAJmxName() {
    String name = "kafka.network:type=RequestMetrics,name=LocalTimeMs,request=Produce";

    assertThat(BrokerRequests.tag(name, "request")).isEqualTo("Produce");
    assertThat(BrokerRequests.tag(name, "version")).isNull();
  }
}
