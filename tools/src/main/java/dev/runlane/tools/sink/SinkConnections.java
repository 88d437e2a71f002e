package dev.runlane.tools.sink;

import dev.runlane.sink.SinkConfig;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Connections of the tools to the sink's database, configured as the sink is ({@code
 * SINK_DATABASE_URL}, {@code SINK_DATABASE_USER}, {@code SINK_DATABASE_PASSWORD}), and the URL as
 * the tools print it: never with a password.
 */
public final class SinkConnections {
  /** A password in the URL's user info ({@code //user:secret@host}). */
  private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/:@]*):[^/@]*@");

  /** A password among the URL's parameters ({@code password=}, {@code sslpassword=}). */
  private static final Pattern PARAMETER_PASSWORD = Pattern.compile("(?i)(password=)[^&;]*");

  private SinkConnections() {}

  /** A connection as the tools use it, with auto-commit off. */
  public static Connection open(SinkConfig config) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", config.databaseUser());
    config.databasePassword().ifPresent(s -> p.setProperty("password", s.reveal()));
    p.setProperty("ApplicationName", "runlane-tools");
    Connection c = DriverManager.getConnection(config.databaseUrl(), p);
    c.setAutoCommit(false);
    return c;
  }

  /**
   * {@code url} with any password in it masked, for printing. The sink refuses a URL with {@code
   * password=} at start; a URL given to the tools alone is masked all the same (D94).
   */
  public static String masked(String url) {
    String s = USER_INFO_PASSWORD.matcher(url).replaceAll("$1:***@");
    return PARAMETER_PASSWORD.matcher(s).replaceAll("$1***");
  }
}
