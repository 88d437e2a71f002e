/** The webhook HTTP server: lifecycle, route table, webhook handler, the one response writer. */
package dev.runlane.ingress.http;
