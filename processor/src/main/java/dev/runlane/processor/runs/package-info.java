/** Materialized state per run: the value type, its serde, and the query endpoint. */
package dev.runlane.processor.runs;
