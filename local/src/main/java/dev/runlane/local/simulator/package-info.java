/**
 * A Sume simulator: signed deliveries with Sume's retry schedule, plus injected real-world faults.
 */
package dev.runlane.local.simulator;
