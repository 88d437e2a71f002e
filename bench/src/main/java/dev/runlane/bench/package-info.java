/**
 * The bench's runner: {@code BenchMain}, the {@code Stage} registry and the context every stage
 * shares (broker, Redis, results); the stages, their loads, probes and report are in the
 * subpackages.
 */
package dev.runlane.bench;
