/** Benchmarks of every pipeline stage next to its raw baseline, measured in the same run. */
package dev.runlane.bench;
