package dev.runlane.processor.dedup;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The values runlane keeps under a request id's key: {@code processing:<owner>@<run tag>} while a
 * task decides it, {@code done:<owner>@<run tag>} after, with {@code :stale} when it was decided
 * stale (D40). The run tag is a 48-bit hash of the run id, eight characters: enough to tell two
 * runs apart (a collision only means a reused id is taken for a duplicate, as before D41), and
 * small enough that a short marker stays in Redis's smallest string allocations (D15).
 *
 * <p>Values without a run tag were written before D41; they are read as naming the event's own run,
 * which is what they meant then.
 */
public final class MarkerValues {
  static final String PROCESSING = "processing:";
  static final String DONE = "done:";
  static final String STALE_SUFFIX = ":stale";
  private static final char RUN = '@';
  private static final Base64.Encoder TAGS = Base64.getUrlEncoder().withoutPadding();

  private MarkerValues() {}

  public static String processing(String owner, String runId) {
    return PROCESSING + owner + RUN + runTag(runId);
  }

  public static String done(String owner, String runId, boolean stale) {
    return DONE + owner + RUN + runTag(runId) + (stale ? STALE_SUFFIX : "");
  }

  /** FNV-1a over the run id's UTF-8 bytes, the low 48 bits in URL-safe base64. */
  public static String runTag(String runId) {
    long hash = 0xcbf29ce484222325L;
    for (byte b : runId.getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= 0x100000001b3L;
    }
    byte[] low = new byte[6];
    for (int i = 0; i < low.length; i++) {
      low[i] = (byte) (hash >>> (8 * i));
    }
    return TAGS.encodeToString(low);
  }

  /**
   * Whether {@code value}, read from a request id's key, is a runlane marker (a claim or done, of
   * any owner) that names another run than {@code runId}: the id was taken first for that run
   * (D41). A value without a run tag, or no runlane value at all, names no other run.
   */
  static boolean namesOtherRun(String value, String runId) {
    if (value == null || !(value.startsWith(DONE) || value.startsWith(PROCESSING))) {
      return false;
    }
    String rest =
        value.endsWith(STALE_SUFFIX)
            ? value.substring(0, value.length() - STALE_SUFFIX.length())
            : value;
    int run = rest.lastIndexOf(RUN);
    return run >= 0 && !rest.substring(run + 1).equals(runTag(runId));
  }

  /**
   * Reads the value that Redis returned for a key this task did not manage to set, for an event of
   * {@code runId}.
   */
  static Claim read(String value, String owner, String runId) {
    if (value == null) {
      // The key expired between our SET NX and GET, and we hold no claim: another task may take
      // it now. Treat it as held elsewhere, so the event waits and is claimed again next drain.
      return Claim.PROCESSING_BY_OTHER;
    }
    boolean done = value.startsWith(DONE);
    if (!done && !value.startsWith(PROCESSING)) {
      // An unknown value is somebody else's: never overwrite it as ours, never trust it either.
      return Claim.UNKNOWN_MARKER;
    }
    String rest = value.substring(done ? DONE.length() : PROCESSING.length());
    boolean stale = done && rest.endsWith(STALE_SUFFIX);
    if (stale) {
      rest = rest.substring(0, rest.length() - STALE_SUFFIX.length());
    }
    int run = rest.lastIndexOf(RUN);
    if (run >= 0 && !rest.substring(run + 1).equals(runTag(runId))) {
      return Claim.OTHER_RUN;
    }
    boolean ours = (run < 0 ? rest : rest.substring(0, run)).equals(owner);
    if (!done) {
      return ours ? Claim.PROCESSING_BY_THIS_TASK : Claim.PROCESSING_BY_OTHER;
    }
    if (!ours) {
      return Claim.DONE_BY_OTHER;
    }
    return stale ? Claim.STALE_BY_THIS_TASK : Claim.DONE_BY_THIS_TASK;
  }
}
