/** The stages, each a figure next to its same-run baseline, and the services they start. */
package dev.runlane.bench.stage;
