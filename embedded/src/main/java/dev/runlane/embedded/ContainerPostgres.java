package dev.runlane.embedded;

import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/** A PostgreSQL in a Testcontainers container, for machines where Docker answers. */
final class ContainerPostgres implements Postgres, AutoCloseable {
  static final String DEFAULT_IMAGE = "postgres:17-alpine";

  private final PostgreSQLContainer container;

  private ContainerPostgres(PostgreSQLContainer container) {
    this.container = container;
  }

  @SuppressWarnings("resource") // closed by close()
  static ContainerPostgres start(String image) {
    PostgreSQLContainer container = new PostgreSQLContainer(DockerImageName.parse(image));
    try {
      container.start();
      return new ContainerPostgres(container);
    } catch (RuntimeException e) {
      container.close();
      throw e;
    }
  }

  @Override
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://"
        + container.getHost()
        + ":"
        + container.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT)
        + "/"
        + database;
  }

  @Override
  public String username() {
    return container.getUsername();
  }

  @Override
  public String password() {
    return container.getPassword();
  }

  @Override
  public String createDatabase(String name) {
    return EmbeddedPostgres.createDatabase(this, name);
  }

  @Override
  public String kind() {
    return SharedInfra.KIND_TESTCONTAINERS;
  }

  @Override
  public void close() {
    container.close();
  }

  @Override
  public String toString() {
    return "ContainerPostgres[" + jdbcUrl("") + "]";
  }
}
