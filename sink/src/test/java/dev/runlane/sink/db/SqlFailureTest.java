package dev.runlane.sink.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.util.List;
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
   * A server's SQLSTATE (none: an I/O failure in the driver), what it is, and what the sink does.
   */
  private record Case(String state, String what, SqlFailure expected) {}

  private static final List<Case> CASES =
      List.of(
          new Case("22021", "U+0000 in text", SqlFailure.RECORD),
          new Case("22003", "numeric out of range", SqlFailure.RECORD),
          new Case("54000", "index row over the btree limit", SqlFailure.RECORD),
          new Case("23514", "a check constraint of the user's", SqlFailure.RECORD),
          new Case("P0001", "raised by a user's trigger", SqlFailure.RECORD),
          new Case("40001", "a serialization failure", SqlFailure.RETRY),
          new Case("40P01", "a deadlock", SqlFailure.RETRY),
          new Case("08006", "connection lost", SqlFailure.DATABASE),
          new Case("57P01", "admin shutdown", SqlFailure.DATABASE),
          new Case("53300", "too many connections", SqlFailure.DATABASE),
          new Case("42501", "a revoked grant", SqlFailure.DATABASE),
          new Case("42P01", "a dropped table", SqlFailure.DATABASE),
          new Case("XX000", "internal error", SqlFailure.DATABASE),
          new Case(null, "an I/O failure in the driver", SqlFailure.DATABASE));

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
    List<Case> cases = CASES.stream().filter(c -> c.expected() == expected).toList();
    assertThat(cases).isNotEmpty();
    for (Case c : cases) {
      assertThat(of(c.state())).as(c.what()).isEqualTo(expected);
    }
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
