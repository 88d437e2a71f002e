package dev.runlane.ingress.publish;

import java.time.Duration;
import org.apache.kafka.common.errors.RetriableException;

/**
 * The ingress has not read the control topic for longer than its bound: it does not know whether
 * its input was retired by a grow, so it writes nothing and the request is answered 503 (D71).
 */
public final class ControlViewStale extends RetriableException {
  private static final long serialVersionUID = 1L;

  ControlViewStale(String message) {
    super(message);
  }

  ControlViewStale(String controlTopic, Duration age, Duration bound) {
    super(
        "the control topic "
            + controlTopic
            + " was last read "
            + age.toMillis()
            + " ms ago (bound "
            + bound.toMillis()
            + " ms): nothing is written until it is read again, so no webhook lands in an input"
            + " that a grow retired");
  }
}
