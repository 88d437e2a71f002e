/** Compares what the simulator sent with what the pipeline produced, as a reusable report. */
package dev.runlane.local.verify;
