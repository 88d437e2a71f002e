package dev.runlane.processor.dedup;

import java.util.Collection;

/**
 * One task's share of a claim round trip: the done markers it still owes, then the ids it claims.
 *
 * @param owner the task that writes the markers and takes the claims
 * @param doneFirst ids to mark done by {@code owner} before any claim of the round trip
 * @param requestIds ids to claim for {@code owner}
 */
public record ClaimRequest(
    String owner, Collection<String> doneFirst, Collection<String> requestIds) {}
