package dev.runlane.processor.topology;

/** Names of the state stores; their changelogs are {@code <application.id>-<name>-changelog}. */
public final class StoreNames {
  /** Run id to {@code RunState}: the durable guard of G2 and G3. */
  public static final String RUNS = "runs";

  /** Input offset to decoded event, parked until its batch is decided. */
  public static final String PENDING = "pending-events";

  private StoreNames() {}

  /** The changelog topic of {@code store} in application {@code applicationId}. */
  public static String changelog(String applicationId, String store) {
    return applicationId + "-" + store + "-changelog";
  }
}
