/** The processor service: configuration, Kafka Streams wiring and lifecycle, entry point. */
package dev.runlane.processor;
