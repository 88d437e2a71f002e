/** The ingress service: configuration from the environment, wiring and lifecycle, entry point. */
package dev.runlane.ingress;
