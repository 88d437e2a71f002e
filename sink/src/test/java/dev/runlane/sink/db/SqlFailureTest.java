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

  @Test
  void whatTheRowHoldsIsTheRecordsFault() {
    assertThat(of("22021")).as("U+0000 in text").isEqualTo(SqlFailure.RECORD);
    assertThat(of("22003")).as("numeric out of range").isEqualTo(SqlFailure.RECORD);
    assertThat(of("54000")).as("index row over the btree limit").isEqualTo(SqlFailure.RECORD);
    assertThat(of("23514")).as("a check constraint of the user's").isEqualTo(SqlFailure.RECORD);
    assertThat(of("P0001")).as("raised by a user's trigger").isEqualTo(SqlFailure.RECORD);
  }

  @Test
  void serializationFailuresAndDeadlocksAreWrittenAgain() {
    assertThat(of("40001")).isEqualTo(SqlFailure.RETRY);
    assertThat(of("40P01")).isEqualTo(SqlFailure.RETRY);
  }

  @Test
  void whatFailsEveryRowAlikeIsTheDatabases() {
    assertThat(of("08006")).as("connection lost").isEqualTo(SqlFailure.DATABASE);
    assertThat(of("57P01")).as("admin shutdown").isEqualTo(SqlFailure.DATABASE);
    assertThat(of("53300")).as("too many connections").isEqualTo(SqlFailure.DATABASE);
    assertThat(of("42501")).as("a revoked grant").isEqualTo(SqlFailure.DATABASE);
    assertThat(of("42P01")).as("a dropped table").isEqualTo(SqlFailure.DATABASE);
    assertThat(of("XX000")).as("internal error").isEqualTo(SqlFailure.DATABASE);
    assertThat(of(null)).as("an I/O failure in the driver").isEqualTo(SqlFailure.DATABASE);
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
