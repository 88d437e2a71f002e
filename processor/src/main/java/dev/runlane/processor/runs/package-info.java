/**
 * Run state: the value, its JSON codec, the per-task head cache, the RocksDB budget, the query
 * endpoint.
 */
package dev.runlane.processor.runs;
