/** The one-JVM stack (broker, Redis, ingress, processor) and its command line: up, send, demo. */
package dev.runlane.local;
