/** The sink service: configuration, wiring and entry point; sume.events into PostgreSQL. */
package dev.runlane.sink;
