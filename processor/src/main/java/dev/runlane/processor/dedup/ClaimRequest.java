package dev.runlane.processor.dedup;

import java.util.Collection;

/**
 * One task's share of a claim round trip: the done markers it owes, then the events it claims.
 *
 * @param owner the task that writes the markers and takes the claims
 * @param doneFirst markers written before any claim of the round trip
 * @param events events to claim for {@code owner}, their request ids distinct
 */
public record ClaimRequest(
    String owner, Collection<Marker> doneFirst, Collection<EventKey> events) {}
