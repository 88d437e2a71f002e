/** The Sume webhook envelope (request id, run id, created_at, type) read in one streaming pass. */
package dev.runlane.common.envelope;
