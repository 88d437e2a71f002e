package dev.runlane.embedded;

import java.net.URI;

/**
 * The real infrastructure an integration test runs against, shared by every test in the JVM.
 * Resolved as a parameter by {@link InfraExtension} (see {@link RealInfra}).
 */
public interface Infra {

  /** Kafka bootstrap servers, e.g. {@code 127.0.0.1:40123}. */
  String bootstrapServers();

  /** The shared Redis, {@code redis://host:port}. Namespace keys per test; never flush it. */
  URI redisUri();

  /**
   * The shared PostgreSQL, started on first use: a Testcontainers container when Docker answers,
   * else {@link EmbeddedPostgres}. Give each test a database of its own ({@link
   * Postgres#createDatabase}); never stop it: a test that takes the database away starts its own
   * {@link EmbeddedPostgres}.
   */
  Postgres postgres();

  /** {@code "testcontainers"} or {@code "embedded"}: where the broker runs. */
  String kafkaKind();

  /**
   * {@code prefix} plus a short random suffix, for topics, application ids, group ids and Redis key
   * namespaces that must not collide with other tests on the shared infrastructure. The result only
   * adds {@code [a-z0-9-]}, so a valid topic-name prefix gives a valid topic name.
   */
  String uniqueName(String prefix);
}
