package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** Stage 2: JMH, {@code SumeSignatureVerifier.verify} vs a raw {@code Mac.doFinal}. */
public final class VerifyStage extends Stage {
  static final String STAGE = "verification";

  public VerifyStage() {
    super(STAGE);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    Options options =
        new OptionsBuilder()
            .include(VerifyBenchmark.class.getName() + ".*")
            .forks(1)
            .warmupIterations(ctx.quick ? 3 : 5)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(ctx.quick ? 3 : 5)
            .measurementTime(TimeValue.seconds(ctx.quick ? 1 : 2))
            .threads(1)
            .jvmArgs("-Xmx512m", "-Dlogback.configurationFile=runlane-bench-logback.xml")
            .build();
    Collection<RunResult> results = new Runner(options).run();
    Map<String, Double> score = new HashMap<>();
    Map<String, Double> error = new HashMap<>();
    for (RunResult r : results) {
      String method = r.getParams().getBenchmark();
      method = method.substring(method.lastIndexOf('.') + 1);
      String key = method + "/" + r.getParams().getParam("size");
      score.put(key, r.getPrimaryResult().getScore());
      error.put(key, r.getPrimaryResult().getScoreError());
    }
    for (String size : new String[] {"256", "2048", "16384"}) {
      double verify = score.getOrDefault("verify/" + size, Double.NaN);
      double raw = score.getOrDefault("rawMac/" + size, Double.NaN);
      double ratio = verify / raw;
      res.add(
          Row.figure(STAGE, "verify(), " + size + " B body", verify, "ns/op")
              .against("raw Mac.doFinal, same bytes", raw, ratio)
              .withTarget("<= 1.2x raw Mac", ratio <= 1.2));
      res.note(
          STAGE,
          String.format(
              "%s B: verify %.0f +- %.0f ns, raw Mac %.0f +- %.0f ns (JMH 99.9%% error)",
              size,
              verify,
              error.getOrDefault("verify/" + size, Double.NaN),
              raw,
              error.getOrDefault("rawMac/" + size, Double.NaN)));
    }
  }
}
