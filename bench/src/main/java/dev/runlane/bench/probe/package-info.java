/**
 * Probes: what the JVM, the kernel, the broker and the services did in a window, read from the
 * inside; the investigation-only ones run when {@code BENCH_PROBES} names them.
 */
package dev.runlane.bench.probe;
