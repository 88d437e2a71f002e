/** The one shared Kafka producer, wrapped as a CompletionStage: webhook records and DLQ writes. */
package dev.runlane.ingress.publish;
