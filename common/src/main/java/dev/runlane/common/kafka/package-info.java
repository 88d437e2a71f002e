/** Topic names, settings and creation, record header names, and shared Kafka client settings. */
package dev.runlane.common.kafka;
