/** The Kafka Streams topology: decode, park, decide in batches, apply, emit. */
package dev.runlane.processor.topology;
