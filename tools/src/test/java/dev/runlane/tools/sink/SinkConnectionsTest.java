package dev.runlane.tools.sink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The sink's URL as the tools print it: never with a password (D94). */
class SinkConnectionsTest {
  @Test
  void aPasswordInTheUrlIsMaskedWhereverItIs() {
    assertThat(SinkConnections.masked("jdbc:postgresql://db:5432/runlane?ssl=true"))
        .isEqualTo("jdbc:postgresql://db:5432/runlane?ssl=true");
    assertThat(SinkConnections.masked("jdbc:postgresql://runlane:s3cret@db:5432/runlane"))
        .isEqualTo("jdbc:postgresql://runlane:***@db:5432/runlane");
    assertThat(
            SinkConnections.masked(
                "jdbc:postgresql://db/runlane?user=u&password=s3cret&sslpassword=k3y&ssl=true"))
        .isEqualTo("jdbc:postgresql://db/runlane?user=u&password=***&sslpassword=***&ssl=true")
        .doesNotContain("s3cret")
        .doesNotContain("k3y");
  }
}
