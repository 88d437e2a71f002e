/** The Prometheus meter registry every service starts from: common tags and JVM binders. */
package dev.runlane.common.metrics;
