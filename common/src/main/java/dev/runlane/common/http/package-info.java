/** The one JSON error shape and the admin HTTP server (health, readiness, Prometheus metrics). */
package dev.runlane.common.http;
