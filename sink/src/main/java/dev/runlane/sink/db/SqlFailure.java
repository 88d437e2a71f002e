package dev.runlane.sink.db;

import java.sql.SQLException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * What a database error means for the sink, read from its SQLSTATE class (the first two characters;
 * PostgreSQL's appendix "Error Codes").
 *
 * <p>Only classes that describe the data are the record's fault: such an error comes back every
 * time the same row is written, so waiting would stall the sink for ever (D61). Every class that
 * says something about the server, the connection, the session or the schema is the database's: the
 * sink waits for it, whatever the batch holds, because setting records aside for a revoked grant or
 * a dropped table would empty the input into the rejected table.
 */
public enum SqlFailure {
  /**
   * The row cannot be stored as it is: data exceptions (22: a U+0000 in text, a number outside
   * {@code numeric}'s range), integrity violations (23: a constraint of the user's), program limits
   * (54: an index row over the btree limit), and an exception raised by a user's trigger (P0).
   */
  RECORD,
  /** A serialization failure or deadlock (40): the same batch written again succeeds. */
  RETRY,
  /**
   * Anything else: the connection (08), resources (53), the server going down (57, 58), an internal
   * error (XX), a dropped table or a revoked grant (42), authentication (28); or an error with no
   * SQLSTATE (an I/O failure in the driver).
   */
  DATABASE;

  /**
   * The meaning of {@code e}'s SQLSTATE. Only the server judges a row: an error the driver raised
   * itself (it reports a statement of ours it cannot bind as 22023, for instance) would be the same
   * for every row, so it is the database's.
   */
  public static SqlFailure of(SQLException e) {
    String state = e.getSQLState();
    if (state == null || state.length() < 2) {
      return DATABASE;
    }
    if (!(e instanceof PSQLException p) || p.getServerErrorMessage() == null) {
      return state.startsWith("40") ? RETRY : DATABASE;
    }
    return switch (state.substring(0, 2)) {
      case "22", "23", "54", "P0" -> RECORD;
      case "40" -> RETRY;
      default -> DATABASE;
    };
  }

  /**
   * The error in one line for a log or the rejected table: the SQLSTATE and the server's own
   * message, never the driver's text around it, which can quote the statement with its parameters
   * (the row's data).
   */
  public static String describe(SQLException e) {
    return "SQLSTATE " + e.getSQLState() + ": " + message(e);
  }

  /** The server's message alone, on one line, at most 300 characters: see {@link #describe}. */
  public static String message(SQLException e) {
    String message = e.getMessage();
    if (e instanceof PSQLException p) {
      ServerErrorMessage server = p.getServerErrorMessage();
      if (server != null && server.getMessage() != null) {
        message = server.getMessage();
      }
    }
    message = String.valueOf(message).strip().replaceAll("\\s*\\R\\s*", "; ");
    if (message.length() > 300) {
      message = message.substring(0, 300) + "...";
    }
    return message;
  }
}
