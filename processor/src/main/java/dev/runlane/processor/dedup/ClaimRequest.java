package dev.runlane.processor.dedup;

import java.util.Collection;
import java.util.Set;

/**
 * One task's share of a claim round trip: the done markers it still owes, then the ids it claims.
 *
 * @param owner the task that writes the markers and takes the claims
 * @param doneFirst ids to mark done by {@code owner} before any claim of the round trip
 * @param staleFirst those of {@code doneFirst} that were decided stale (marked so, D40)
 * @param requestIds ids to claim for {@code owner}
 */
public record ClaimRequest(
    String owner,
    Collection<String> doneFirst,
    Set<String> staleFirst,
    Collection<String> requestIds) {}
