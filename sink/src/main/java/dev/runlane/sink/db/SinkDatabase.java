package dev.runlane.sink.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runlane.common.config.Secret;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The sink's connection pool, and its schema brought up to date by Flyway at start. */
public final class SinkDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SinkDatabase.class);

  /** Flyway doubles its wait between connection attempts up to this. */
  private static final int MAX_RETRY_INTERVAL_SECONDS = 5;

  private final HikariDataSource pool;

  private SinkDatabase(HikariDataSource pool) {
    this.pool = pool;
  }

  /**
   * A pool of two connections (the consumer loop's and a spare for its health probe), and the
   * migrations applied; waits up to {@code startupTimeout} for the database to answer.
   */
  public static SinkDatabase open(
      String url, String user, Optional<Secret> password, Duration startupTimeout) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("runlane-sink");
    config.setJdbcUrl(url);
    config.setUsername(user);
    password.ifPresent(p -> config.setPassword(p.reveal()));
    config.setMaximumPoolSize(2);
    config.setAutoCommit(false);
    // A database that is down makes a borrow fail within 3 s, so the loop notices, backs off and
    // tells readiness, instead of blocking for Hikari's default 30 s.
    config.setConnectionTimeout(3_000);
    config.setValidationTimeout(1_000);
    // The pool is created whether or not the database answers yet: Flyway waits for it below.
    config.setInitializationFailTimeout(-1);
    config.addDataSourceProperty("ApplicationName", "runlane-sink");
    // A database that stops answering without closing the connection fails the statement after
    // 30 s instead of hanging the loop for ever.
    config.addDataSourceProperty("socketTimeout", "30");
    config.addDataSourceProperty("tcpKeepAlive", "true");
    // A constraint's "Detail: Failing row contains (...)" quotes the row, data and all: errors
    // reach the log and the rejected table without it (D61).
    config.addDataSourceProperty("logServerErrorDetail", "false");
    HikariDataSource pool = new HikariDataSource(config);
    try {
      migrate(pool, startupTimeout);
      return new SinkDatabase(pool);
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  private static void migrate(DataSource dataSource, Duration startupTimeout) {
    int retries = (int) Math.max(1, startupTimeout.toSeconds() / MAX_RETRY_INTERVAL_SECONDS + 2);
    var result =
        Flyway.configure()
            .dataSource(dataSource)
            .locations("classpath:db/migration")
            .connectRetries(retries)
            .connectRetriesInterval(MAX_RETRY_INTERVAL_SECONDS)
            .load()
            .migrate();
    log.info(
        "database schema at version {} ({} migrations applied now)",
        result.targetSchemaVersion == null ? "unchanged" : result.targetSchemaVersion,
        result.migrationsExecuted);
  }

  /** A connection with auto-commit off; the caller commits or rolls back, and closes it. */
  public Connection connection() throws SQLException {
    return pool.getConnection();
  }

  /** Whether the database answers a validation within a second. */
  public boolean answers() {
    try (Connection c = pool.getConnection()) {
      return c.isValid(1);
    } catch (SQLException e) {
      return false;
    }
  }

  public DataSource dataSource() {
    return pool;
  }

  @Override
  public void close() {
    pool.close();
  }
}
