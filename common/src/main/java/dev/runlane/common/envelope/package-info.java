/**
 * The Sume webhook envelope (request id, run id, created_at, type): read in one streaming pass
 * ({@link dev.runlane.common.envelope.EnvelopeParser}), written for the simulator, the bench and
 * the tests ({@link dev.runlane.common.envelope.SumeEvents}).
 */
package dev.runlane.common.envelope;
