package dev.runlane.processor.dedup;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one claim round trip answered.
 *
 * @param claims each request's claims by request id, in the requests' order; {@link
 *     Claim#UNAVAILABLE} for an id whose node did not answer (D82)
 * @param unwritten the request ids of done markers not written, their node not answering: still
 *     owed
 */
public record ClaimAnswer(List<Map<String, Claim>> claims, Set<String> unwritten) {}
