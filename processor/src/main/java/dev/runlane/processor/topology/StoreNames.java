package dev.runlane.processor.topology;

import dev.runlane.common.generation.StateTopics;

/** Names of the state stores; their changelogs are {@code <application.id>-<name>-changelog}. */
public final class StoreNames {
  /** Run id to {@code RunState}: the durable guard of G2 and G3. */
  public static final String RUNS = StateTopics.RUNS_STORE;

  /** Input offset to decoded event, parked until its batch is decided. */
  public static final String PENDING = StateTopics.PENDING_STORE;

  /** Input offset to decoded event, held by the reorder window until its release (D46). */
  public static final String HELD = StateTopics.HELD_STORE;

  /** Request id to its run and outcome, within the dedup horizon (D68). */
  public static final String DECIDED = StateTopics.DECIDED_STORE;

  private StoreNames() {}

  /** The changelog topic of {@code store} in application {@code applicationId}. */
  public static String changelog(String applicationId, String store) {
    return StateTopics.changelog(applicationId, store);
  }
}
