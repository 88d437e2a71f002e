package dev.runlane.local;

import java.time.Duration;

/**
 * The sizing model of operations.md "Sizing" (D84): from a webhook rate, the dedup horizon and the
 * broker retention, what a deployment needs. Every constant is a measured figure, named with the
 * test or benchmark row it comes from, or an explicit planning margin over one.
 *
 * @param rate webhooks per second at peak
 * @param horizon how long a done marker is kept ({@code DEDUP_DONE_TTL_SECONDS})
 * @param retention how long the input and output topics keep records
 * @param recordBytes bytes of one input record (body and headers) as the broker stores it
 * @param gbPerPrimary the memory a Redis primary may give to markers
 */
record SizingModel(
    double rate, Duration horizon, Duration retention, int recordBytes, double gbPerPrimary) {

  /** {@code used_memory} per done marker on one Redis 6.2 node ({@code MarkerMemoryIT}). */
  static final double MARKER_BYTES_ONE_NODE = 165;

  /** The same on a cluster node, which also indexes each key by slot ({@code MarkerMemoryIT}). */
  static final double MARKER_BYTES_CLUSTER = 267;

  /**
   * Webhooks/s one 2-core processor instance is planned for: half of the 25,107/s the processor
   * stage measured with Redis dedup (BENCHMARKS.md, A15; broker and Redis on the same 2 cores).
   */
  static final double PROCESSOR_RATE = 12_500;

  /**
   * Webhooks/s one 2-core ingress instance is planned for: half of the 16k/s at p99 &lt; 10 ms the
   * ingress stage measured (BENCHMARKS.md, A15b).
   */
  static final double INGRESS_RATE = 8_000;

  /**
   * Changelog bytes per input event of the record of decided ids, after compression (BENCHMARKS.md,
   * the D68 row).
   */
  static final double DECIDED_ID_BYTES = 16;

  /** Copies of every topic: the broker replication factor the deploy examples use. */
  static final int REPLICATION = 3;

  /** Instances added to each service so that one can fail or roll without losing capacity. */
  static final int SPARE = 1;

  private static final double GB = 1e9;

  /** Done markers held at once: one per webhook within the horizon. */
  double markers() {
    return rate * horizon.toSeconds();
  }

  /** Whether one Redis node (or a Sentinel-managed primary) holds every marker. */
  boolean oneNode() {
    return markers() * MARKER_BYTES_ONE_NODE <= gbPerPrimary * GB;
  }

  double redisGb() {
    return markers() * (oneNode() ? MARKER_BYTES_ONE_NODE : MARKER_BYTES_CLUSTER) / GB;
  }

  /** Primaries (each with a replica for failover): 1 while one node holds the markers. */
  int redisPrimaries() {
    return oneNode() ? 1 : (int) Math.ceil(redisGb() / gbPerPrimary);
  }

  int processors() {
    return (int) Math.ceil(rate / PROCESSOR_RATE) + SPARE;
  }

  int ingresses() {
    return (int) Math.ceil(rate / INGRESS_RATE) + SPARE;
  }

  /**
   * Input partitions: at least 12 (the default), and two per stream thread of the instances, one
   * thread per core, so that a grow is not the next step (a multiple of 12).
   */
  int partitions() {
    int threads = processors() * 2;
    return Math.max(12, (int) Math.ceil(threads * 2 / 12.0) * 12);
  }

  /**
   * Broker disk over all replicas: the input and the events topic at {@code recordBytes} for the
   * retention, and the record of decided ids for the horizon plus a day; the runs topic and the run
   * store's changelog are compacted to one record per run and left out.
   */
  double brokerTb() {
    double topics = 2 * rate * recordBytes * retention.toSeconds();
    double decided = rate * DECIDED_ID_BYTES * horizon.plusDays(1).toSeconds();
    return (topics + decided) * REPLICATION / (GB * 1000);
  }

  /** Rows the database sink inserts per day: one per applied event. */
  double sinkRowsPerDay() {
    return rate * 86_400;
  }

  /** What runs out first, and what to add. */
  String firstBottleneck() {
    if (brokerTb() > 20 * redisGb() / 1000 && brokerTb() > 50) {
      return "broker disk: shorten retention, compress, or add brokers";
    }
    if (!oneNode()) {
      return "Redis memory: a cluster of "
          + redisPrimaries()
          + " primaries, or a shorter DEDUP_DONE_TTL_SECONDS";
    }
    if (processors() > 2) {
      return "processor CPU: add instances (partitions allow " + partitions() / 2 + " threads)";
    }
    return "none: one of each, and a spare";
  }
}
