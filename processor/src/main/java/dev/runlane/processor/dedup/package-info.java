/** The decision table (pure, design.md §6.2) and the Redis claims and done markers behind it. */
package dev.runlane.processor.dedup;
