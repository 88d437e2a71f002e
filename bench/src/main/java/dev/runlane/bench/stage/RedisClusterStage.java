package dev.runlane.bench.stage;

import dev.runlane.bench.BenchContext;
import dev.runlane.bench.Stage;
import dev.runlane.bench.report.Results;
import dev.runlane.bench.report.Row;
import dev.runlane.embedded.EmbeddedRedis;
import dev.runlane.embedded.EmbeddedRedisCluster;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.Jedis;

/**
 * Opt-in stage {@code redis-cluster}: the processor stage's run with Redis dedup on one node and on
 * a 3-primary Redis Cluster of the same bundled {@code redis-server}, same input, in the order one
 * node, cluster, cluster, one node (a run's place moves its rate, D68), after a discarded warm-up
 * (D82).
 */
public final class RedisClusterStage extends Stage {
  static final String STAGE = "redis-cluster";

  public RedisClusterStage() {
    super(STAGE, true, Services.PROCESSOR_TUNING);
  }

  @Override
  public void run(BenchContext ctx) throws Exception {
    Results res = ctx.results;
    int events = ctx.volume();
    String input = "bench.cluster.webhooks";
    ctx.createTopics(input);
    ProcessorStage.fill(13).write(ctx.bootstrap(), input, events);
    EmbeddedRedis redis = ctx.redis();
    try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3, false)) {
      Map<String, String> onCluster = Map.of("REDIS_URL", cluster.uri().toString());
      run(ctx, input, "bench-cl-warm", events, redis, Map.of());
      ProcessorStage.flushAll(redis);
      ProcessorStage.Run one = run(ctx, input, "bench-cl-one", events, redis, Map.of());
      ProcessorStage.flushAll(redis);
      ProcessorStage.Run three = run(ctx, input, "bench-cl-three", events, redis, onCluster);
      flushAll(cluster);
      ProcessorStage.Run threeAgain =
          run(ctx, input, "bench-cl-three-again", events, redis, onCluster);
      flushAll(cluster);
      ProcessorStage.Run oneAgain = run(ctx, input, "bench-cl-one-again", events, redis, Map.of());
      ProcessorStage.flushAll(redis);
      double onCl = (three.rate() + threeAgain.rate()) / 2;
      double onOne = (one.rate() + oneAgain.rate()) / 2;
      res.add(
          Row.figure(
                  STAGE,
                  "events/s to committed outputs, Redis dedup on a 3-primary cluster (mean of two"
                      + " runs, A B B A)",
                  onCl,
                  "events/s")
              .against("same topology on one Redis node", onOne, onCl / onOne)
              .withTarget(">= 0.9x one node", onCl / onOne >= 0.9));
      // Each call is one round trip to each node it needs, so calls per event bound the round
      // trips per event of every node.
      double perNode = (double) (three.roundTrips() + threeAgain.roundTrips()) / (2.0 * events);
      res.add(
          Row.figure(STAGE, "Redis round trips per event per node, cluster (at most)", perNode, "")
              .withTarget("<= 1/100", perNode <= 0.01));
      for (ProcessorStage.Run r : List.of(one, three, threeAgain, oneAgain)) {
        res.note(
            STAGE,
            String.format(
                "%s: %,d events in %.1f s (%,.0f/s), %,d Redis calls, outcomes %s",
                r.appId(), r.events(), r.seconds(), r.rate(), r.roundTrips(), r.outcomes()));
      }
    }
  }

  private static ProcessorStage.Run run(
      BenchContext ctx,
      String input,
      String appId,
      int events,
      EmbeddedRedis redis,
      Map<String, String> extra)
      throws Exception {
    return ProcessorStage.runOnce(
        ctx.bootstrap(), input, appId, true, events, redis, extra, false, true);
  }

  private static void flushAll(EmbeddedRedisCluster cluster) {
    for (EmbeddedRedis primary : cluster.primaries()) {
      try (Jedis j = new Jedis(primary.host(), primary.port())) {
        j.flushAll();
      }
    }
  }
}
