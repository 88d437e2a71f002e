/** Topic names and settings, topic creation, and the record header names shared by the services. */
package dev.runlane.common.kafka;
