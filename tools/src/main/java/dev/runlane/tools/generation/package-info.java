/** The procedures that make a new generation: replay (rebuild, reprocess) and partition growth. */
package dev.runlane.tools.generation;
