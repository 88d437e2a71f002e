package dev.runlane.embedded;

/**
 * A real PostgreSQL server for integration tests and the local stack: {@link EmbeddedPostgres} (the
 * server binaries from Maven Central, run as a process) or a Testcontainers container.
 */
public interface Postgres {

  /** {@code jdbc:postgresql://127.0.0.1:PORT/<database>}. */
  String jdbcUrl(String database);

  /** A superuser of the server. */
  String username();

  /** Its password, or null when the server trusts local connections. */
  String password();

  /**
   * Creates an empty database named {@code name} ({@code [a-z0-9_]}, as {@link
   * Infra#uniqueName(String)} gives with {@code -} replaced by {@code _}) and returns its name.
   */
  String createDatabase(String name);

  /** {@code "embedded"} or {@code "testcontainers"}: where the server runs. */
  String kind();
}
