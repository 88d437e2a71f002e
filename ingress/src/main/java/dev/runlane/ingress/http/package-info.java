/** The webhook HTTP server: lifecycle, route table, webhook handler, the one error writer. */
package dev.runlane.ingress.http;
