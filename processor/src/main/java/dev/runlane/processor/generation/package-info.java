/** Which generation the processor runs, and the check that its input still fits its state. */
package dev.runlane.processor.generation;
