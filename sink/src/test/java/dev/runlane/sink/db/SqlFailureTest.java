package dev.runlane.sink.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

class SqlFailureTest {

  /** An error as PostgreSQL reports it: SQLSTATE and message in the server's own fields. */
  private static SqlFailure of(String state) {
    if (state == null) {
      return SqlFailure.of(new SQLException("I/O error"));
    }
    return SqlFailure.of(
        new PSQLException(new ServerErrorMessage("SERROR\0C" + state + "\0Mmessage\0")));
  }

  /**
   * A server's SQLSTATE ({@code -}: none, an I/O failure in the driver), what the sink makes of it,
   * and what it is.
   */
  private static final String CASES =
      """
      22021 RECORD   U+0000 in text
      22003 RECORD   numeric out of range
      54000 RECORD   index row over the btree limit
      23514 RECORD   a check constraint of the user's
      P0001 RECORD   raised by a user's trigger
      40001 RETRY    a serialization failure
      40P01 RETRY    a deadlock
      08006 DATABASE connection lost
      57P01 DATABASE admin shutdown
      53300 DATABASE too many connections
      42501 DATABASE a revoked grant
      42P01 DATABASE a dropped table
      XX000 DATABASE internal error
      -     DATABASE an I/O failure in the driver
      """;

  @Test
  void whatTheRowHoldsIsTheRecordsFault() {
    assertEveryCaseOf(SqlFailure.RECORD);
  }

  @Test
  void serializationFailuresAndDeadlocksAreWrittenAgain() {
    assertEveryCaseOf(SqlFailure.RETRY);
  }

  @Test
  void whatFailsEveryRowAlikeIsTheDatabases() {
    assertEveryCaseOf(SqlFailure.DATABASE);
  }

  private static void assertEveryCaseOf(SqlFailure expected) {
    int cases = 0;
    for (String line : CASES.lines().toList()) {
      String[] c = line.split(" +", 3);
      if (SqlFailure.valueOf(c[1]) == expected) {
        assertThat(of(c[0].equals("-") ? null : c[0])).as(c[2]).isEqualTo(expected);
        cases++;
      }
    }
    assertThat(cases).isPositive();
  }

  @Test
  void anErrorTheDriverRaisesItselfIsTheDatabasesWhateverItsState() {
    // pgjdbc reports a statement of ours it cannot bind as 22023: the same for every row.
    assertThat(
            SqlFailure.of(
                new PSQLException(
                    "No value specified for parameter 3.", PSQLState.INVALID_PARAMETER_VALUE)))
        .isEqualTo(SqlFailure.DATABASE);
    assertThat(SqlFailure.of(new SQLException("plain", "22021"))).isEqualTo(SqlFailure.DATABASE);
  }

  @Test
  void describeKeepsTheServersMessageAloneOnOneLine() {
    PSQLException e =
        new PSQLException(
            new ServerErrorMessage(
                "SERROR\0C23502\0Mnull value in column \"who\"\0DFailing row contains (secret)\0"));
    assertThat(SqlFailure.describe(e))
        .isEqualTo("SQLSTATE 23502: null value in column \"who\"")
        .doesNotContain("secret");
  }
}
