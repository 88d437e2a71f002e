/** What the tools ask of Kafka: offsets, groups, topics, and reading or copying changelogs. */
package dev.runlane.tools.kafka;
