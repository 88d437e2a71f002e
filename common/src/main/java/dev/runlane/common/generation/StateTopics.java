package dev.runlane.common.generation;

/**
 * The processor's state stores and their changelog topics, {@code
 * <application.id>-<store>-changelog}: named once here, because the operator tools read and seed
 * them without the processor's code.
 */
public final class StateTopics {
  /** Run id to run state: the durable guard of G2 and G3. */
  public static final String RUNS_STORE = "runs";

  /** Input offset (a long, big-endian) to the decoded event, parked until it is decided. */
  public static final String PENDING_STORE = "pending-events";

  /**
   * Input offset to the decoded event, like {@link #PENDING_STORE}, for events a reorder window
   * holds: decided, not yet applied (D46).
   */
  public static final String HELD_STORE = "held-events";

  /**
   * Request id, at its record's arrival time, to the run it was decided for and whether it was to
   * be applied: the task's record of decided ids within the dedup horizon (D68).
   */
  public static final String DECIDED_STORE = "decided-ids";

  private StateTopics() {}

  /** The changelog topic of {@code store} in application {@code applicationId}. */
  public static String changelog(String applicationId, String store) {
    return applicationId + "-" + store + "-changelog";
  }

  public static String runsChangelog(String applicationId) {
    return changelog(applicationId, RUNS_STORE);
  }

  public static String pendingChangelog(String applicationId) {
    return changelog(applicationId, PENDING_STORE);
  }

  public static String heldChangelog(String applicationId) {
    return changelog(applicationId, HELD_STORE);
  }
}
