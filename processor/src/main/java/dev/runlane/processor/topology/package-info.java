/** The Streams topology (design.md §6): decode, park, decide in batches, apply in order, emit. */
package dev.runlane.processor.topology;
