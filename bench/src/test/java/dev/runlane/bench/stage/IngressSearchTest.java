package dev.runlane.bench.stage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.bench.load.OpenLoopLoad;
import dev.runlane.bench.report.Latency;
import org.junit.jupiter.api.Test;

class IngressSearchTest {

  private static OpenLoopLoad.Result window(int rate, double p99Ms) {
    return new OpenLoopLoad.Result(
        rate,
        10,
        rate * 10L,
        rate * 10L,
        0,
        0,
        null,
        0,
        new Latency.Summary(rate * 10L, 1.0, p99Ms, p99Ms, p99Ms, 1.0),
        0);
  }

  @Test
  void aStepWhoseSecondWindowKeepsUpDoesNotEndTheSearch() {
    IngressStage.Search search = new IngressStage.Search("ingress");
    search.offer(window(8000, 5), null);
    search.offer(window(9000, 600), window(9000, 30));
    assertThat(search.done).isFalse();
    assertThat(search.capacity).isEqualTo(9000);
    search.offer(window(10000, 600), window(10000, 700));
    assertThat(search.done).isTrue();
    assertThat(search.capacity).isEqualTo(9000);
  }

  @Test
  void onlyAStepsFirstWindowCountsForTheTenMillisecondFigure() {
    IngressStage.Search search = new IngressStage.Search("bare");
    search.offer(window(8000, 5), null);
    search.offer(window(9000, 600), window(9000, 5));
    assertThat(search.under10).isEqualTo(8000);
    assertThat(search.capacity).isEqualTo(9000);
  }

  @Test
  void theThroughoutFigureStopsAtTheFirstStepOverTenMilliseconds() {
    IngressStage.Search search = new IngressStage.Search("ingress");
    search.offer(window(2000, 3), null);
    search.offer(window(4000, 5), null);
    search.offer(window(6000, 26), null);
    search.offer(window(8000, 8), null);
    assertThat(search.under10Throughout).isEqualTo(4000);
    assertThat(search.under10).isEqualTo(8000);
  }
}
