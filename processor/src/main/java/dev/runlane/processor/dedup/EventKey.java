package dev.runlane.processor.dedup;

/**
 * One event as the dedup layer sees it: its request id, and the run it names. The run goes into
 * every marker, so that a copy of the id naming another run is told apart from a duplicate (D41).
 */
public record EventKey(String requestId, String runId) {}
