package dev.runlane.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The PostgreSQL launcher: a real server that keeps its data across a stop and a restart. */
@RealInfra
class EmbeddedPostgresIT {

  @Test
  void committedRowsSurviveAStopAndARestartOnTheSamePort() throws SQLException {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      String db = pg.createDatabase("launcher_test");
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl(db), pg.username(), null);
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE t (id int PRIMARY KEY)");
        s.execute("INSERT INTO t VALUES (1), (2)");
      }
      int port = pg.port();

      pg.stop();
      assertThat(pg.isRunning()).isFalse();
      assertThatThrownBy(() -> DriverManager.getConnection(pg.jdbcUrl(db), pg.username(), null))
          .isInstanceOf(SQLException.class);

      pg.restart();
      assertThat(pg.port()).isEqualTo(port);
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl(db), pg.username(), null);
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT count(*) FROM t")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(2);
      }
    }
  }

  @Test
  void theSharedServerGivesEachTestADatabaseOfItsOwn(Infra infra) throws SQLException {
    Postgres pg = infra.postgres();
    String a = pg.createDatabase(infra.uniqueName("shared_a").replace('-', '_'));
    String b = pg.createDatabase(infra.uniqueName("shared_b").replace('-', '_'));
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(a), pg.username(), pg.password());
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE only_in_a (id int)");
    }
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(b), pg.username(), pg.password());
        ResultSet rs = c.getMetaData().getTables(null, null, "only_in_a", null)) {
      assertThat(rs.next()).as("table of database a visible in b").isFalse();
    }
  }
}
