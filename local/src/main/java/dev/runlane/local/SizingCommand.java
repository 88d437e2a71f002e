package dev.runlane.local;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code runlane sizing --rate R}: the sizing model (operations.md "Sizing", D84) for one rate. */
@Command(
    name = "sizing",
    mixinStandardHelpOptions = true,
    description =
        "Prints what a deployment needs for a webhook rate: Redis memory and primaries,"
            + " processor and ingress instances, input partitions, broker disk, sink rows per day.")
final class SizingCommand implements Callable<Integer> {

  @Option(names = "--rate", required = true, description = "Webhooks per second at peak.")
  double rate;

  @Option(
      names = "--horizon-hours",
      defaultValue = "24",
      description = "Dedup horizon, DEDUP_DONE_TTL_SECONDS in hours (default: 24).")
  long horizonHours;

  @Option(
      names = "--retention-days",
      defaultValue = "7",
      description = "Retention of the input and output topics in days (default: 7).")
  long retentionDays;

  @Option(
      names = "--record-bytes",
      defaultValue = "1100",
      description = "Bytes of one input record, body and headers (default: 1100).")
  int recordBytes;

  @Option(
      names = "--gb-per-primary",
      defaultValue = "25",
      description = "Memory a Redis primary may give to markers, in GB (default: 25).")
  double gbPerPrimary;

  @Override
  public Integer call() {
    SizingModel model =
        new SizingModel(
            rate,
            Duration.ofHours(horizonHours),
            Duration.ofDays(retentionDays),
            recordBytes,
            gbPerPrimary);
    print(System.out, model);
    return 0;
  }

  static void print(PrintStream out, SizingModel m) {
    out.printf("webhooks/s              %,.0f%n", m.rate());
    out.printf(
        "dedup markers           %,.0f (%d h horizon)%n", m.markers(), m.horizon().toHours());
    out.printf(
        "Redis memory            %,.1f GB (%s B per marker)%n",
        m.redisGb(), m.oneNode() ? "165, one node" : "267, cluster");
    out.printf(
        "Redis primaries         %d%s, each with a replica%n",
        m.redisPrimaries(), m.oneNode() ? " (one node or Sentinel)" : " (Redis Cluster)");
    out.printf("processor instances     %d (2 cores each, one spare)%n", m.processors());
    out.printf("ingress instances       %d (2 cores each, one spare)%n", m.ingresses());
    out.printf("input partitions        %d%n", m.partitions());
    out.printf(
        "broker disk             %,.1f TB (%d days, %d B records, replication 3)%n",
        m.brokerTb(), m.retention().toDays(), m.recordBytes());
    out.printf("sink rows per day       %,.0f%n", m.sinkRowsPerDay());
    out.printf("first bottleneck        %s%n", m.firstBottleneck());
  }
}
